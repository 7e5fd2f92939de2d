package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMCPDepth bounds the nesting of one stdio JSON-RPC message (objects and arrays).
const maxMCPDepth = 512

// lineTransport is the stdio transport of capdex mcp: newline-delimited JSON-RPC, one
// message a line. Unlike the SDK's IOTransport, whose connection ends at the first line it
// cannot decode, it answers a bad line itself — -32700 for one that is not JSON, -32600 for
// one that is not a single JSON-RPC 2.0 message (another version, an id that is neither a
// string nor an integer, a batch, nesting past maxMCPDepth, a line past maxLine bytes) —
// and keeps reading. Until an initialize (or server/discover) request has passed, any other
// request but ping is refused with -32600.
type lineTransport struct {
	in      io.Reader
	out     io.Writer
	maxLine int
	log     *slog.Logger
}

// Connect starts the reading goroutine. It ends at the end of the input; a Close does not
// unblock a read of the input in progress (no portable way exists for stdin), so the
// goroutine outlives the connection until the input ends.
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: t.out, log: t.log, incoming: make(chan jsonrpc.Message), closed: make(chan struct{}), eof: make(chan struct{})}
	go c.readLoop(t.in, t.maxLine)
	return c, nil
}

type lineConn struct {
	out     io.Writer
	log     *slog.Logger
	writeMu sync.Mutex // guards writes to out

	incoming chan jsonrpc.Message
	eof      chan struct{} // closed when the input ended (readErr says how)
	readErr  error
	closed   chan struct{}
	once     sync.Once
	// started is set once an initialize or server/discover request has been passed on.
	started atomic.Bool
}

func (c *lineConn) readLoop(in io.Reader, maxLine int) {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case line == nil && len(chunk) <= maxLine+2: // +2: the line end
			line = append(make([]byte, 0, len(chunk)), chunk...)
		case line != nil && len(line)+len(chunk) <= maxLine+2:
			line = append(line, chunk...)
		default: // too long: skip to the end of the line
			if !c.skipLine(br, err) {
				return
			}
			c.writeError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than limits.max_mcp_line_bytes (%d bytes): skipped", maxLine))
			line = nil
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if !c.handleLine(line) {
				return
			}
		}
		line = nil
		if err != nil {
			c.endInput(err)
			return
		}
	}
}

// skipLine discards the rest of a too long line; false when the input ended meanwhile.
func (c *lineConn) skipLine(br *bufio.Reader, err error) bool {
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = br.ReadSlice('\n')
	}
	if err != nil {
		c.endInput(err)
		return false
	}
	return true
}

func (c *lineConn) endInput(err error) {
	if errors.Is(err, io.EOF) {
		err = io.EOF
	}
	c.readErr = err
	close(c.eof)
}

// handleLine passes one valid message on or answers the error itself; false once the
// connection is closed.
func (c *lineConn) handleLine(line []byte) bool {
	msg, id, code, problem := checkMessage(line)
	if problem != "" {
		c.writeError(id, code, problem)
		return true
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		switch req.Method {
		case "initialize", "server/discover":
			c.started.Store(true)
		case "ping":
		default:
			if !c.started.Load() {
				c.writeError(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("%s before initialize: send initialize first", req.Method))
				return true
			}
		}
	}
	select {
	case c.incoming <- msg:
		return true
	case <-c.closed:
		return false
	}
}

// checkMessage validates one line as a single JSON-RPC 2.0 message. On a problem it returns
// the JSON-RPC error code, the message and the request's id when it could be read (nil
// otherwise).
func checkMessage(line []byte) (msg jsonrpc.Message, id json.RawMessage, code int64, problem string) {
	line = bytes.TrimSpace(line)
	if d, ok := jsonDepth(line); ok && d > maxMCPDepth {
		return nil, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: nesting deeper than %d levels", maxMCPDepth)
	}
	if !json.Valid(line) {
		return nil, nil, jsonrpc.CodeParseError, "parse error: the line is not one JSON value"
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported: send one message a line"
	default:
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object"
	}
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	if len(env.ID) > 0 && !validID(env.ID) {
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or an integer"
	}
	id = env.ID
	if string(id) == "null" {
		id = nil
	}
	switch {
	case env.JSONRPC == nil:
		return nil, id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc": "2.0" is missing`
	case *env.JSONRPC != "2.0":
		return nil, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(`invalid request: jsonrpc is %q, want "2.0"`, *env.JSONRPC)
	}
	if len(env.Method) > 0 && env.Method[0] != '"' {
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: method must be a string"
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return msg, id, 0, ""
}

// validID reports whether raw is a JSON-RPC id: a string, an integer or null.
func validID(raw json.RawMessage) bool {
	switch raw[0] {
	case '"', 'n':
		return true
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return false
	}
	return f == math.Trunc(f) && math.Abs(f) <= 1<<53
}

// jsonDepth returns the deepest nesting of objects and arrays in b, or false when b is not
// well formed enough to tell (json.Valid reports that).
func jsonDepth(b []byte) (int, bool) {
	depth, max := 0, 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				max = depth
			}
		case '}', ']':
			depth--
			if depth < 0 {
				return 0, false
			}
		}
	}
	return max, true
}

// writeError writes a JSON-RPC error answer; id nil answers "id": null.
func (c *lineConn) writeError(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}}) // strings and a valid id: cannot fail
	c.log.Warn("mcp stdio: bad message", "code", code, "error", msg)
	if err := c.writeLine(b); err != nil {
		c.log.Warn("mcp stdio: writing an error answer", "err", err)
	}
}

func (c *lineConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// Read returns the next valid message, io.EOF once the input ended.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m, nil
	case <-c.eof:
		return nil, c.readErr
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes one message as a line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

// Close ends the connection (the input is not closed: see Connect).
func (c *lineConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has one session.
func (c *lineConn) SessionID() string { return "" }
