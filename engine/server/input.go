package server

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// searchBody is the body of POST /v1/search and the arguments of capability_search: the
// search request with limit kept raw, so that 0, 5.5 and "5" are refused as the schema
// says (an integer 1..10) instead of read as the default or as a type error.
type searchBody struct {
	registry.SearchRequest
	Limit json.RawMessage `json:"limit,omitempty"`
}

// request returns the search request with its limit checked (absent: the default).
func (b *searchBody) request() (registry.SearchRequest, error) {
	req := b.SearchRequest
	if len(b.Limit) == 0 {
		return req, nil
	}
	n, err := parseLimit(b.Limit)
	if err != nil {
		return req, err
	}
	req.Limit = n
	return req, nil
}

// parseLimit reads a JSON limit: an integer (3.0 is one, as JSON Schema counts) in
// 1..registry.MaxLimit.
func parseLimit(raw json.RawMessage) (int, error) {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > registry.MaxLimit {
		return 0, fmt.Errorf("%w: limit must be an integer between 1 and %d, got %s", engine.ErrInvalidRequest, registry.MaxLimit, raw)
	}
	return int(f), nil
}

// jsonBodyType is the one media type the JSON API reads.
const jsonBodyType = "application/json"

// checkContentType answers 415 unless the request declares its body application/json
// (parameters such as charset=utf-8 are allowed).
func checkContentType(w http.ResponseWriter, r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == jsonBodyType {
		return true
	}
	got := strconv.Quote(ct)
	switch {
	case ct == "":
		got = "none"
	case err == nil:
		got = mt
	}
	writeError(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be "+jsonBodyType+", got "+got)
	return false
}

// jsonValueKind names the kind of the JSON value starting at its first byte c.
func jsonValueKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
