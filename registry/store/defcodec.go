package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/capdex/capdex/registry"
)

// Definitions are stored in a compact binary encoding (def/<id>/<version> values that start
// with defBinaryV1); values that start with '{' are the JSON of earlier stores and are still
// read. Decoding the binary form costs a fraction of decoding JSON, which was most of
// reading a registry back (Active at every open). The encoding reads back exactly what a
// JSON round trip of the definition gives (TestDefCodecSameAsJSON): empty lists and maps
// are absent, invalid UTF-8 is replaced as encoding/json replaces it, and embedded JSON
// (schemas, example arguments) is kept compacted and HTML-escaped as json.Marshal writes
// it. Format v1: the byte 0x01, then every field of registry.Capability in declaration
// order — strings and byte strings as a uvarint length and the bytes, integers as varints,
// booleans as one byte, lists as a uvarint count and the elements, maps as a count and
// their pairs in key order, optional values (handler, enabled) behind a presence byte.
const defBinaryV1 byte = 0x01

// errDefCodec is the decoding error of a damaged binary definition.
var errDefCodec = errors.New("binary definition damaged")

// encodeDefBinary returns the binary encoding of c (see defBinaryV1).
func encodeDefBinary(c *registry.Capability) []byte {
	e := defEncoder{b: make([]byte, 0, 1024)}
	e.b = append(e.b, defBinaryV1)
	e.str(c.ID)
	e.int(int64(c.Version))
	e.str(string(c.ResourceType))
	e.str(c.CapabilityType)
	e.str(c.Title)
	e.str(c.Summary)
	e.strs(c.Aliases)
	e.strs(c.Intents)
	e.strs(c.Entities)
	e.strs(c.Symptoms)
	e.strs(c.WhenToUse)
	e.strs(c.WhenNotToUse)
	e.str(c.Domain)
	e.strs(c.Scenarios)
	e.strs(c.SupportedOS)
	e.strs(c.RequiredExecutors)
	e.str(string(c.SideEffect))
	e.str(string(c.RiskLevel))
	e.bool(c.RequiresConfirmation)
	e.int(int64(c.Timeout))
	e.str(string(c.NetworkPolicy))
	e.strs(c.NetworkAllow)
	e.strs(c.ACL.Discover)
	e.strs(c.ACL.Describe)
	e.strs(c.ACL.Execute)
	e.strs(c.ACL.Deny)
	e.str(c.Owner)
	e.str(c.Reviewer)
	e.str(string(c.Status))
	e.raw(c.ArgumentsSchema)
	e.raw(c.OutputSchema)
	if h := c.Handler; h == nil {
		e.bool(false)
	} else {
		e.bool(true)
		e.str(h.Kind)
		e.str(h.Name)
		e.str(h.Server)
		e.strs(h.Argv)
		e.bool(h.Shell)
		e.strs(h.Env)
		e.str(h.Dir)
		e.int(int64(h.MaxOutput))
		e.str(h.Method)
		e.str(h.URL)
		e.smap(h.Headers)
		e.str(h.Body)
		e.smap(h.Secrets)
		e.bool(h.RecordArguments)
	}
	e.strs(c.Produces)
	e.strs(c.Tags)
	p := &c.Provenance
	e.str(p.Provider)
	e.str(p.Source)
	e.bool(p.Imported)
	e.str(p.Format)
	e.str(p.ReviewedAt)
	e.str(p.SchemaDigest)
	e.str(c.Compatibility.AgentRuntime)
	e.strs(c.Compatibility.Regions)
	var bh registry.Behavior
	if c.Behavior != nil {
		bh = *c.Behavior
	}
	e.str(bh.LatencyClass)
	e.str(bh.CostClass)
	e.bool(bh.SupportsDryRun)
	e.strs(c.Requirements.Credentials)
	e.strs(c.Requirements.FeatureFlags)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(c.Requirements.MinBudget))
	e.str(c.Health.Status)
	e.str(c.Health.CheckedAt)
	e.str(c.Health.Message)
	e.uint(uint64(len(c.Examples)))
	for _, x := range c.Examples {
		e.str(x.Title)
		e.raw(x.Arguments)
	}
	e.str(c.ExternalID)
	e.str(c.Guidance)
	switch {
	case c.Enabled == nil:
		e.uint(0)
	case *c.Enabled:
		e.uint(2)
	default:
		e.uint(1)
	}
	e.strs(c.Tenants)
	e.uint(uint64(len(c.Steps)))
	for _, s := range c.Steps {
		e.str(s.Title)
		e.str(s.Command)
		e.str(s.Action)
		e.str(s.Note)
	}
	return e.b
}

type defEncoder struct{ b []byte }

func (e *defEncoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *defEncoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }

func (e *defEncoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// str writes s as encoding/json would read it back: each byte of an invalid UTF-8
// sequence becomes U+FFFD.
func (e *defEncoder) str(s string) {
	if utf8.ValidString(s) {
		e.uint(uint64(len(s)))
		e.b = append(e.b, s...)
		return
	}
	v := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			v = utf8.AppendRune(v, utf8.RuneError)
		} else {
			v = append(v, s[i:i+n]...)
		}
		i += n
	}
	e.uint(uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *defEncoder) strs(l []string) {
	e.uint(uint64(len(l)))
	for _, s := range l {
		e.str(s)
	}
}

// smap writes m's pairs in key order (as encoding/json does). Keys that coerce to the same
// valid UTF-8 are written once, the last in key order, as a JSON decoder keeps the last.
func (e *defEncoder) smap(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	type pair struct{ k, v string }
	pairs := make([]pair, 0, len(keys))
	at := make(map[string]int, len(keys))
	for _, k := range keys {
		ck := validUTF8(k)
		if i, ok := at[ck]; ok {
			pairs[i].v = m[k]
			continue
		}
		at[ck] = len(pairs)
		pairs = append(pairs, pair{ck, m[k]})
	}
	e.uint(uint64(len(pairs)))
	for _, p := range pairs {
		e.str(p.k)
		e.str(p.v)
	}
}

// validUTF8 is s as str writes it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var e defEncoder
	e.str(s)
	_, n := binary.Uvarint(e.b)
	return string(e.b[n:])
}

// raw writes embedded JSON as json.Marshal writes a json.RawMessage: compacted and
// HTML-escaped. The definition was marshalled before (encodeDef), so r is valid JSON.
func (e *defEncoder) raw(r json.RawMessage) {
	if len(r) == 0 {
		e.uint(0)
		return
	}
	var c, h bytes.Buffer
	if err := json.Compact(&c, r); err != nil {
		c.Reset()
		c.Write(r)
	}
	json.HTMLEscape(&h, c.Bytes())
	e.uint(uint64(h.Len()))
	e.b = append(e.b, h.Bytes()...)
}

// decodeDefBinary decodes a binary definition (see defBinaryV1). The result shares no
// memory with data.
func decodeDefBinary(data []byte) (*registry.Capability, error) {
	if len(data) == 0 || data[0] != defBinaryV1 {
		return nil, fmt.Errorf("%w: unknown format", errDefCodec)
	}
	d := defDecoder{s: data[1:]}
	c := new(registry.Capability)
	c.ID = d.str()
	c.Version = int(d.int())
	c.ResourceType = registry.ResourceType(d.str())
	c.CapabilityType = d.str()
	c.Title = d.str()
	c.Summary = d.str()
	c.Aliases = d.strs()
	c.Intents = d.strs()
	c.Entities = d.strs()
	c.Symptoms = d.strs()
	c.WhenToUse = d.strs()
	c.WhenNotToUse = d.strs()
	c.Domain = d.str()
	c.Scenarios = d.strs()
	c.SupportedOS = d.strs()
	c.RequiredExecutors = d.strs()
	c.SideEffect = registry.SideEffect(d.str())
	c.RiskLevel = registry.RiskLevel(d.str())
	c.RequiresConfirmation = d.bool()
	c.Timeout = registry.Duration(d.int())
	c.NetworkPolicy = registry.NetworkPolicy(d.str())
	c.NetworkAllow = d.strs()
	c.ACL.Discover = d.strs()
	c.ACL.Describe = d.strs()
	c.ACL.Execute = d.strs()
	c.ACL.Deny = d.strs()
	c.Owner = d.str()
	c.Reviewer = d.str()
	c.Status = registry.Status(d.str())
	c.ArgumentsSchema = d.raw()
	c.OutputSchema = d.raw()
	if d.bool() {
		h := new(registry.Handler)
		h.Kind = d.str()
		h.Name = d.str()
		h.Server = d.str()
		h.Argv = d.strs()
		h.Shell = d.bool()
		h.Env = d.strs()
		h.Dir = d.str()
		h.MaxOutput = int(d.int())
		h.Method = d.str()
		h.URL = d.str()
		h.Headers = d.smap()
		h.Body = d.str()
		h.Secrets = d.smap()
		h.RecordArguments = d.bool()
		c.Handler = h
	}
	c.Produces = d.strs()
	c.Tags = d.strs()
	p := &c.Provenance
	p.Provider = d.str()
	p.Source = d.str()
	p.Imported = d.bool()
	p.Format = d.str()
	p.ReviewedAt = d.str()
	p.SchemaDigest = d.str()
	c.Compatibility.AgentRuntime = d.str()
	c.Compatibility.Regions = d.strs()
	if bh := (registry.Behavior{LatencyClass: d.str(), CostClass: d.str(), SupportsDryRun: d.bool()}); !bh.IsZero() {
		c.Behavior = &bh
	}
	c.Requirements.Credentials = d.strs()
	c.Requirements.FeatureFlags = d.strs()
	c.Requirements.MinBudget = d.float()
	c.Health.Status = d.str()
	c.Health.CheckedAt = d.str()
	c.Health.Message = d.str()
	if n := d.count(); n > 0 {
		c.Examples = make([]registry.Example, n)
		for i := range c.Examples {
			c.Examples[i].Title = d.str()
			c.Examples[i].Arguments = d.raw()
		}
	}
	c.ExternalID = d.str()
	c.Guidance = d.str()
	switch d.uint() {
	case 0:
	case 1:
		c.Enabled = new(bool)
	case 2:
		t := true
		c.Enabled = &t
	default:
		d.fail()
	}
	c.Tenants = d.strs()
	if n := d.count(); n > 0 {
		c.Steps = make([]registry.RecipeStep, n)
		for i := range c.Steps {
			c.Steps[i] = registry.RecipeStep{Title: d.str(), Command: d.str(), Action: d.str(), Note: d.str()}
		}
	}
	if d.bad || d.i != len(d.s) {
		return nil, fmt.Errorf("%w at byte %d of %d", errDefCodec, d.i+1, len(data))
	}
	return c, nil
}

// defDecoder reads a binary definition; after the first error (bad) it returns zero values.
type defDecoder struct {
	s   []byte
	i   int
	bad bool
}

func (d *defDecoder) fail() { d.bad, d.i = true, len(d.s) }

func (d *defDecoder) uint() uint64 {
	if d.bad {
		return 0
	}
	var v uint64
	var shift uint
	for j := 0; j < binary.MaxVarintLen64; j++ {
		if d.i >= len(d.s) {
			break
		}
		b := d.s[d.i]
		d.i++
		if b < 0x80 {
			if j == binary.MaxVarintLen64-1 && b > 1 {
				break
			}
			return v | uint64(b)<<shift
		}
		v |= uint64(b&0x7f) << shift
		shift += 7
	}
	d.fail()
	return 0
}

func (d *defDecoder) int() int64 {
	u := d.uint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *defDecoder) bool() bool {
	switch d.uint() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail()
	return false
}

func (d *defDecoder) float() float64 {
	if d.bad || len(d.s)-d.i < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.s[d.i : d.i+8]))
	d.i += 8
	return v
}

// count reads a list length; a list cannot hold more elements than bytes remain.
func (d *defDecoder) count() int {
	n := d.uint()
	if n > uint64(len(d.s)-d.i) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *defDecoder) str() string {
	n := d.count()
	if d.bad || n == 0 {
		return ""
	}
	s := string(d.s[d.i : d.i+n])
	d.i += n
	return s
}

func (d *defDecoder) bytes() []byte {
	n := d.count()
	if d.bad || n == 0 {
		return nil
	}
	b := bytes.Clone(d.s[d.i : d.i+n])
	d.i += n
	return b
}

func (d *defDecoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *defDecoder) smap() map[string]string {
	n := d.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := d.str()
		m[k] = d.str()
	}
	return m
}

func (d *defDecoder) raw() json.RawMessage { return d.bytes() }
