package registry

import (
	"bytes"
	"testing"
)

func TestZZCache(t *testing.T) {
	data := evalData(t, "seal_tools")
	resetSchemaCache()
	Import(bytes.NewReader(data[0]), FormatJSONL)
	t.Log("entries", len(schemaCache.m))
	Import(bytes.NewReader(data[0]), FormatJSONL)
	t.Log("entries", len(schemaCache.m))
}
