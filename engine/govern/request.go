package govern

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/capdex/capdex/registry"
)

// MaxRunRequestBytes bounds the body DecodeRunRequest accepts.
const MaxRunRequestBytes = 1 << 20

// maxArgsDepth bounds the nesting of arguments.
const maxArgsDepth = 64

// RunRequest is the input of capability_run.
type RunRequest struct {
	// ID is the action id; "id@N" pins version N like Version does.
	ID string `json:"id"`
	// Version pins the version the caller expects; 0 means the active one.
	Version int `json:"version,omitempty"`
	// Arguments is a JSON object; empty or null means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// ConfirmationToken redeems an earlier confirmation_required answer.
	ConfirmationToken string `json:"confirmation_token,omitempty"`
}

var runRequestFields = map[string]bool{"id": true, "version": true, "arguments": true, "confirmation_token": true}

// DecodeRunRequest decodes a run request strictly: one JSON object of at most
// MaxRunRequestBytes, no unknown or repeated fields, id a valid id (optionally "id@N"),
// version a non-negative integer agreeing with an "@N" pin, arguments an object or null,
// confirmation_token a string. Errors wrap ErrBadRequest.
func DecodeRunRequest(b []byte) (RunRequest, error) {
	var req RunRequest
	if len(b) > MaxRunRequestBytes {
		return req, fmt.Errorf("%w: body of %d bytes exceeds %d", ErrBadRequest, len(b), MaxRunRequestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return req, fmt.Errorf("%w: want a JSON object", ErrBadRequest)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return req, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
		key, _ := tok.(string) // object keys are always strings
		if !runRequestFields[key] {
			return req, fmt.Errorf("%w: unknown field %q", ErrBadRequest, key)
		}
		if seen[key] {
			return req, fmt.Errorf("%w: repeated field %q", ErrBadRequest, key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return req, fmt.Errorf("%w: field %s: %v", ErrBadRequest, key, err)
		}
		switch key {
		case "id":
			if err := json.Unmarshal(raw, &req.ID); err != nil {
				return req, fmt.Errorf("%w: id must be a string", ErrBadRequest)
			}
		case "version":
			n, err := strconv.ParseInt(string(raw), 10, 32)
			if err != nil || n < 0 {
				return req, fmt.Errorf("%w: version must be a non-negative integer", ErrBadRequest)
			}
			req.Version = int(n)
		case "arguments":
			switch t := bytes.TrimSpace(raw); {
			case string(t) == "null":
			case len(t) > 0 && t[0] == '{':
				req.Arguments = t
			default:
				return req, fmt.Errorf("%w: arguments must be a JSON object", ErrBadRequest)
			}
		case "confirmation_token":
			if err := json.Unmarshal(raw, &req.ConfirmationToken); err != nil {
				return req, fmt.Errorf("%w: confirmation_token must be a string", ErrBadRequest)
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return req, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, fmt.Errorf("%w: data after the object", ErrBadRequest)
	}
	if req.ID == "" {
		return req, fmt.Errorf("%w: id is required", ErrBadRequest)
	}
	id, pin, err := registry.SplitVersion(req.ID)
	if err != nil || !registry.ValidID(id) {
		return req, fmt.Errorf("%w: invalid id %q", ErrBadRequest, req.ID)
	}
	if pin != 0 {
		if req.Version != 0 && req.Version != pin {
			return req, fmt.Errorf("%w: id pins version %d but version is %d", ErrBadRequest, pin, req.Version)
		}
		req.ID, req.Version = id, pin
	}
	return req, nil
}

// decodeArguments parses a run's arguments (empty or null → {}) into a map with numbers as
// json.Number and returns its canonical JSON: keys sorted, no insignificant whitespace,
// number literals verbatim, a repeated key keeping its last value. Handlers receive the
// canonical form, so a script never sees a key the schema validator did not.
func decodeArguments(raw json.RawMessage) (map[string]any, []byte, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return map[string]any{}, []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("arguments: data after the JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errors.New("arguments must be a JSON object")
	}
	var buf bytes.Buffer
	if err := canonical(&buf, m, 0); err != nil {
		return nil, nil, err
	}
	return m, buf.Bytes(), nil
}

// canonical writes v (as decoded with UseNumber) as canonical JSON.
func canonical(w *bytes.Buffer, v any, depth int) error {
	if depth > maxArgsDepth {
		return fmt.Errorf("arguments nest deeper than %d levels", maxArgsDepth)
	}
	switch x := v.(type) {
	case nil:
		w.WriteString("null")
	case bool:
		w.WriteString(strconv.FormatBool(x))
	case json.Number:
		w.WriteString(x.String())
	case string:
		writeString(w, x)
	case []any:
		w.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := canonical(w, e, depth+1); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.WriteByte(',')
			}
			writeString(w, k)
			w.WriteByte(':')
			if err := canonical(w, x[k], depth+1); err != nil {
				return err
			}
		}
		w.WriteByte('}')
	default:
		return fmt.Errorf("arguments: unexpected %T", v)
	}
	return nil
}

func writeString(w *bytes.Buffer, s string) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	w.Truncate(w.Len() - 1)
}

// ArgumentsDigest is "sha256:<hex>" of the canonical JSON of a run's arguments (empty or
// null arguments digest as {}). Key order and whitespace do not change it; any value does.
func ArgumentsDigest(raw json.RawMessage) (string, error) {
	_, canon, err := decodeArguments(raw)
	if err != nil {
		return "", err
	}
	return digestBytes(canon), nil
}

func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
