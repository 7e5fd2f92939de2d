package server

import _ "embed"

// openAPIDocument is the OpenAPI 3.1 description of the HTTP API, served at /openapi.json.
// TestOpenAPI keeps it true: every route is documented, every documented operation is
// routed, and the request and response schemas name exactly the Go types' JSON fields.
//
//go:embed openapi.json
var openAPIDocument []byte
