package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"weak"

	"gopkg.in/yaml.v3"
)

// Limits of one file: nesting depth, and values visited. Alias expansion counts every visit,
// so a "billion laughs" document fails instead of exhausting memory: a file may expand to
// at most nodesPerByte values per byte of input (plus minNodes), a bound no document
// without aliases comes near.
const (
	maxDepth     = 128
	minNodes     = 1 << 16
	nodesPerByte = 8
)

// idKeys are the keys a definition may name its id with; exactly one is allowed.
var idKeys = []string{"id", "action_id", "pack_id", "recipe_id"}

// DefaultMaxFileBytes is the default bound of one definition file (LoadOptions).
const DefaultMaxFileBytes = 4 << 20

// LoadOptions tune LoadDirWith and LoadFSWith.
type LoadOptions struct {
	// MaxFileBytes bounds one definition file; a larger file is refused with a LintError
	// naming it (default DefaultMaxFileBytes).
	MaxFileBytes int64
}

func (o LoadOptions) maxFile() int64 {
	if o.MaxFileBytes <= 0 {
		return DefaultMaxFileBytes
	}
	return o.MaxFileBytes
}

// LoadDir is LoadDirWith with the default options.
func LoadDir(dir string) ([]*Capability, error) { return LoadDirWith(dir, LoadOptions{}) }

// LoadDirWith loads every definition under dir (see LoadFS); errors name files by their
// path joined to dir. Only regular files are read: a FIFO, device or socket with a
// definition file's name is refused with a LintError naming it, without being opened for
// a blocking read. A symlink is followed when it leads to a regular file inside dir (as the
// symlinks of a Kubernetes ConfigMap volume do); one that leads outside dir, to something
// other than a regular file, or nowhere is refused. A file over o.MaxFileBytes is refused
// without being read past the limit.
func LoadDirWith(dir string, o LoadOptions) ([]*Capability, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: load %s: %w", dir, err)
	}
	defer root.Close()
	open := func(p string) (fs.File, error) { return root.OpenFile(p, os.O_RDONLY|openNonBlocking, 0) }
	return loadFS(root.FS(), ".", open, o, func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) })
}

// LoadFS is LoadFSWith with the default options.
func LoadFS(fsys fs.FS, root string) ([]*Capability, error) {
	return LoadFSWith(fsys, root, LoadOptions{})
}

// LoadFSWith loads every definition under root in fsys: each *.yaml, *.yml or *.json file
// holds one definition (a mapping) or a list of them; YAML files may hold several
// documents. Directories named "scripts" (handler scripts) and names starting with "." are
// skipped, as are files with other extensions. A definition names its id with exactly one
// of id, action_id, pack_id or recipe_id; every other key must be a field of Capability
// (its JSON name) holding a value of the right type. Files that are not regular (after
// following a symlink) or larger than o.MaxFileBytes are refused.
//
// Each definition is sealed (Seal), then the whole set is linted (Lint). On any problem
// LoadFSWith returns nil and a LintErrors listing every problem found, each naming file,
// line and field. Errors reading fsys are returned as they are.
func LoadFSWith(fsys fs.FS, root string, o LoadOptions) ([]*Capability, error) {
	return loadFS(fsys, root, fsys.Open, o, func(p string) string { return p })
}

func loadFS(fsys fs.FS, root string, open func(string) (fs.File, error), o LoadOptions, display func(string) string) ([]*Capability, error) {
	var (
		caps []*Capability
		errs LintErrors
	)
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || (d.IsDir() && name == "scripts")) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isDefinitionFile(name) {
			return nil
		}
		data, refused, err := readDefinitionFile(fsys, open, p, d, o.maxFile())
		if err != nil {
			return err
		}
		if refused != "" {
			errs = append(errs, LintError{File: display(p), Msg: refused})
			return nil
		}
		c, e := parseFile(display(p), data)
		caps = append(caps, c...)
		errs = append(errs, e...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("registry: load %s: %w", display(root), err)
	}
	errs = append(errs, Lint(caps)...)
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return caps, nil
}

// readDefinitionFile reads the definition file p of fsys, or says why it is refused: not
// a regular file, a symlink that cannot be followed inside fsys, or over max bytes. The
// type is checked before opening (a FIFO is never opened) and again on the open file (a
// file swapped in between is caught), and at most max+1 bytes are read.
func readDefinitionFile(fsys fs.FS, open func(string) (fs.File, error), p string, d fs.DirEntry, max int64) (data []byte, refused string, err error) {
	mode := d.Type()
	if mode&fs.ModeSymlink != 0 {
		fi, err := fs.Stat(fsys, p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, "a symlink to nothing: refused", nil
			}
			return nil, "a symlink that leads outside the registry directory (or cannot be followed): refused; only symlinks to regular files inside it are read", nil
		}
		mode = fi.Mode().Type()
		if !mode.IsRegular() {
			return nil, fmt.Sprintf("a symlink to %s, not a regular file: refused", modeName(mode)), nil
		}
	}
	if !mode.IsRegular() {
		return nil, fmt.Sprintf("%s, not a regular file: refused (only regular files are read)", modeName(mode)), nil
	}
	f, err := open(p)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Sprintf("%s, not a regular file: refused (only regular files are read)", modeName(fi.Mode().Type())), nil
	}
	tooBig := func(n int64) string {
		return fmt.Sprintf("file of %d bytes exceeds the limit of %d bytes per definition file (max_registry_file_bytes)", n, max)
	}
	if fi.Size() > max {
		return nil, tooBig(fi.Size()), nil
	}
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > max {
		return nil, tooBig(int64(len(data))), nil
	}
	return data, "", nil
}

// modeName names a file type for an error message.
func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "an irregular file"
}

func isDefinitionFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// ParseFile decodes the definitions in one file's content (JSON when name ends in .json,
// YAML otherwise) and seals them. It checks what one file can show (syntax, unknown fields,
// types, id keys) but does not Lint: parent packs may live in other files. On any problem
// it returns nil and a LintErrors naming name, line and field.
func ParseFile(name string, data []byte) ([]*Capability, error) {
	caps, errs := parseFile(name, data)
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return caps, nil
}

// parseFile returns the definitions that decoded (possibly with fields left out) and every
// problem found. Fields that failed to decode are remembered so Lint does not report them
// a second time.
func parseFile(name string, data []byte) (caps []*Capability, errs LintErrors) {
	d := &decoder{file: name, json: strings.EqualFold(path.Ext(name), ".json"), errs: &errs,
		maxNodes: minNodes + nodesPerByte*len(data)}
	defer func() {
		// yaml.v3 has panicked on hostile input before; a parser panic is a malformed file.
		if r := recover(); r != nil {
			caps = nil
			errs = append(errs, LintError{File: name, Msg: fmt.Sprintf("malformed file: parser failure: %v", r)})
		}
	}()
	var roots []*yaml.Node
	if d.json {
		root, err := parseJSONNode(data)
		if err != nil {
			var se *jsonSyntaxError
			line := 0
			if errors.As(err, &se) {
				line = se.line
			}
			errs = append(errs, LintError{File: name, Line: line, Msg: "malformed JSON: " + err.Error()})
			return nil, errs
		}
		roots = []*yaml.Node{root}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				line, msg := yamlErrorLine(err)
				errs = append(errs, LintError{File: name, Line: line, Msg: "malformed YAML: " + msg})
				return nil, errs
			}
			if len(doc.Content) > 0 {
				roots = append(roots, doc.Content[0])
			}
		}
	}
	for _, root := range roots {
		caps = append(caps, d.file1(root)...)
		if d.aborted {
			break
		}
	}
	return caps, errs
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// --- positions ---

// sourcePos is where a loaded definition came from: its file, its line, and the line of
// every key, by JSON path.
type sourcePos struct {
	file  string
	line  int
	idKey string         // the key that named the id (id, action_id, pack_id, recipe_id)
	lines map[string]int // field path → line of its key
	bad   map[string]bool
}

// lineOf returns the line of field, of its nearest parent that has one, or of the definition.
func (p *sourcePos) lineOf(field string) int {
	for f := field; f != ""; f = parentPath(f) {
		if l, ok := p.lines[f]; ok {
			return l
		}
	}
	return p.line
}

// suppressed reports whether field or one of its parents failed to decode (and so was
// already reported).
func (p *sourcePos) suppressed(field string) bool {
	for f := field; f != ""; f = parentPath(f) {
		if p.bad[f] {
			return true
		}
	}
	return false
}

// displayField names the id field by the key the file used.
func (p *sourcePos) displayField(field string) string {
	if field == "id" && p.idKey != "" {
		return p.idKey
	}
	return field
}

// parentPath strips the last element of a field path: "a.b[2]" → "a.b" → "a" → "".
func parentPath(f string) string {
	if strings.HasSuffix(f, "]") {
		if i := strings.LastIndexByte(f, '['); i >= 0 {
			return f[:i]
		}
	}
	if i := strings.LastIndexByte(f, '.'); i >= 0 {
		return f[:i]
	}
	return ""
}

// positions maps loaded capabilities to their sourcePos without keeping them alive: the
// key is a weak pointer and a cleanup drops the entry when the capability is collected.
var positions sync.Map // weak.Pointer[Capability] → *sourcePos

func setPosition(c *Capability, p *sourcePos) {
	wp := weak.Make(c)
	if _, loaded := positions.Swap(wp, p); !loaded {
		runtime.AddCleanup(c, func(k weak.Pointer[Capability]) { positions.Delete(k) }, wp)
	}
}

func positionOf(c *Capability) *sourcePos {
	if c == nil {
		return nil
	}
	v, ok := positions.Load(weak.Make(c))
	if !ok {
		return nil
	}
	return v.(*sourcePos)
}

// Source returns the file and line a capability was loaded from; ok is false for
// capabilities that were not read by LoadDir, LoadFS or ParseFile (clones included).
func Source(c *Capability) (file string, line int, ok bool) {
	p := positionOf(c)
	if p == nil {
		return "", 0, false
	}
	return p.file, p.line, true
}

// --- YAML node → JSON ---

// decoder turns yaml.Node trees into the JSON encoding of Capability, checking field names
// and value types against the Go types as it goes, and records every problem.
type decoder struct {
	file     string
	json     bool // the file is JSON: strings must be quoted
	errs     *LintErrors
	id       string     // id of the definition being decoded, for errors
	pos      *sourcePos // positions of the definition being decoded
	nodes    int        // values visited so far
	maxNodes int
	aborted  bool
}

func (d *decoder) fail(field string, line int, format string, args ...any) {
	if d.pos != nil {
		d.pos.bad[field] = true
		field = d.pos.displayField(field)
	}
	*d.errs = append(*d.errs, LintError{File: d.file, Line: line, Field: field, ID: d.id, Msg: fmt.Sprintf(format, args...)})
}

// visit counts a node against the budget and follows aliases. It returns nil when the file
// is too large or too deep; the problem is then reported once and decoding stops.
func (d *decoder) visit(n *yaml.Node, depth int) *yaml.Node {
	if d.aborted {
		return nil
	}
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > maxDepth {
			n = nil
			break
		}
		n = n.Alias
	}
	d.nodes++
	switch {
	case n == nil:
		d.abort("", 0, "unresolvable YAML alias")
	case depth > maxDepth:
		d.abort("", n.Line, "nesting deeper than %d levels (or an alias that contains itself)", maxDepth)
	case d.nodes > d.maxNodes:
		d.abort("", n.Line, "document too large: more than %d values after alias expansion", d.maxNodes)
	default:
		return n
	}
	return nil
}

func (d *decoder) abort(field string, line int, format string, args ...any) {
	if !d.aborted {
		d.fail(field, line, format, args...)
		d.aborted = true
	}
}

// file1 decodes one document root: a mapping (one definition) or a sequence of them.
func (d *decoder) file1(root *yaml.Node) []*Capability {
	root = d.visit(root, 0)
	if root == nil {
		return nil
	}
	switch {
	case root.Kind == yaml.MappingNode:
		if c := d.definition(root); c != nil {
			return []*Capability{c}
		}
		return nil
	case root.Kind == yaml.SequenceNode:
		var caps []*Capability
		for i, item := range root.Content {
			item = d.visit(item, 1)
			if item == nil {
				return caps
			}
			if item.Kind != yaml.MappingNode {
				d.fail(fmt.Sprintf("[%d]", i), item.Line, "want a mapping (one definition), got %s", kindName(item))
				continue
			}
			if c := d.definition(item); c != nil {
				caps = append(caps, c)
			}
		}
		return caps
	case isNull(root):
		return nil
	}
	d.fail("", root.Line, "want a definition (a mapping) or a list of them, got %s", kindName(root))
	return nil
}

// definition decodes one capability definition.
func (d *decoder) definition(n *yaml.Node) *Capability {
	d.id = ""
	d.pos = &sourcePos{file: d.file, line: n.Line, lines: make(map[string]int), bad: make(map[string]bool)}
	defer func() { d.pos = nil }()
	pairs := d.pairs(n, "", 1)
	if d.aborted {
		return nil
	}
	// Find the id first so every error of this definition can name it.
	var idAt []int
	for i, p := range pairs {
		if slices.Contains(idKeys, p.key) {
			idAt = append(idAt, i)
		}
	}
	switch len(idAt) {
	case 0:
		d.fail("id", n.Line, "missing id (one of id, action_id, pack_id or recipe_id)")
	case 1:
		p := &pairs[idAt[0]]
		d.pos.idKey = p.key
		d.pos.lines["id"] = p.keyNode.Line
		if v := d.visit(p.val, 1); v != nil && v.Kind == yaml.ScalarNode && !isNull(v) {
			d.id = v.Value
		}
		p.key = "id"
	default:
		a, b := pairs[idAt[0]], pairs[idAt[1]]
		d.pos.idKey = a.key
		d.fail(b.key, b.keyNode.Line, "both %s and %s given; a definition has exactly one id key", a.key, b.key)
		pairs = slices.Delete(pairs, idAt[1], idAt[1]+1)
		pairs[idAt[0]].key = "id"
	}
	var buf bytes.Buffer
	d.objectPairs(pairs, capabilityType, "", &buf, 1)
	if d.aborted {
		return nil
	}
	c := new(Capability)
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		// The walk above checked names and types, so this is a bug or an unforeseen case;
		// report it rather than lose it.
		field := ""
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field = te.Field
		}
		d.fail(field, d.pos.lineOf(field), "%v", err)
	}
	switch want := strings.TrimSuffix(d.pos.idKey, "_id"); {
	case d.pos.idKey == "" || d.pos.idKey == "id":
	case c.ResourceType == "":
		c.ResourceType = ResourceType(want) // action_id names an action, as it says
	case string(c.ResourceType) != want:
		d.fail("resource_type", d.pos.lineOf("resource_type"), "%s names %s but resource_type is %q", d.pos.idKey, withArticle(want), c.ResourceType)
		c.ResourceType = "" // which one is meant is unknown: check no type-specific rules
	}
	if typed := c.Provenance.SchemaDigest; typed != "" && typed != Digest(c) {
		d.fail("provenance.schema_digest", d.pos.lineOf("provenance.schema_digest"),
			"schema_digest is computed, never typed (this definition digests to %s)", Digest(c))
	}
	Seal(c)
	setPosition(c, d.pos)
	return c
}

type pair struct {
	key     string
	keyNode *yaml.Node
	val     *yaml.Node
}

// pairs lists the key/value pairs of a mapping, expanding YAML merge keys ("<<"; explicit
// keys win) and reporting duplicate and non-string keys.
func (d *decoder) pairs(n *yaml.Node, path string, depth int) []pair {
	explicit := make(map[string]*yaml.Node)
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.visit(n.Content[i], depth)
		if k == nil {
			return nil
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(path, k.Line, "mapping keys must be strings, got %s", kindName(k))
			continue
		}
		if first, dup := explicit[k.Value]; dup {
			d.fail(joinPath(path, k.Value), k.Line, "duplicate key %q (first at line %d)", k.Value, first.Line)
			continue
		}
		explicit[k.Value] = k
	}
	seen := make(map[string]bool, len(explicit))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.visit(n.Content[i], depth)
		if k == nil {
			return nil
		}
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if k.ShortTag() == "!!merge" {
			for _, p := range d.merged(n.Content[i+1], path, depth) {
				if explicit[p.key] == nil && !seen[p.key] {
					seen[p.key] = true
					out = append(out, p)
				}
			}
			continue
		}
		if explicit[k.Value] == k && !seen[k.Value] {
			seen[k.Value] = true
			out = append(out, pair{key: k.Value, keyNode: k, val: n.Content[i+1]})
		}
	}
	return out
}

// merged returns the pairs a merge key brings in: one mapping, or a list of them where
// earlier mappings win.
func (d *decoder) merged(v *yaml.Node, path string, depth int) []pair {
	v = d.visit(v, depth+1)
	if v == nil {
		return nil
	}
	switch v.Kind {
	case yaml.MappingNode:
		return d.pairs(v, path, depth+1)
	case yaml.SequenceNode:
		var out []pair
		for _, m := range v.Content {
			m = d.visit(m, depth+2)
			if m == nil {
				return out
			}
			if m.Kind != yaml.MappingNode {
				d.fail(path, m.Line, "a merge key (<<) takes mappings, got %s", kindName(m))
				continue
			}
			out = append(out, d.pairs(m, path, depth+2)...)
		}
		return out
	}
	d.fail(path, v.Line, "a merge key (<<) takes a mapping, got %s", kindName(v))
	return nil
}

var (
	capabilityType = reflect.TypeFor[Capability]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	durationType   = reflect.TypeFor[Duration]()
)

// jsonFields maps the JSON names of a struct type's fields to their types.
var jsonFields sync.Map // reflect.Type → map[string]reflect.Type

func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if v, ok := jsonFields.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	m := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		m[name] = f.Type
	}
	jsonFields.Store(t, m)
	return m
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// value writes n as the JSON encoding of a value of type t, reporting a problem and
// returning false when n does not fit t.
func (d *decoder) value(n *yaml.Node, t reflect.Type, path string, w *bytes.Buffer, depth int) bool {
	n = d.visit(n, depth)
	if n == nil {
		return false
	}
	switch t {
	case rawMessageType:
		return d.generic(n, path, w, depth)
	case durationType:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			d.fail(path, n.Line, "want a duration such as \"30s\", got %s", kindName(n))
			return false
		}
		v, err := time.ParseDuration(n.Value)
		if err != nil || v < 0 {
			d.fail(path, n.Line, "invalid duration %q (want a Go duration such as \"30s\")", n.Value)
			return false
		}
		writeJSONString(w, n.Value)
		return true
	}
	switch t.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			w.WriteString("null")
			return true
		}
		return d.value(n, t.Elem(), path, w, depth)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.fail(path, n.Line, "want a mapping, got %s", kindName(n))
			return false
		}
		d.objectPairs(d.pairs(n, path, depth), t, path, w, depth)
		return true
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(path, n.Line, "want a list, got %s", kindName(n))
			return false
		}
		w.WriteByte('[')
		ok := true
		for i, item := range n.Content {
			if i > 0 {
				w.WriteByte(',')
			}
			ip := fmt.Sprintf("%s[%d]", path, i)
			if d.pos != nil && item.Line > 0 {
				d.pos.lines[ip] = item.Line
			}
			if !d.value(item, t.Elem(), ip, w, depth+1) {
				w.WriteString("null")
				ok = false
			}
		}
		w.WriteByte(']')
		return ok
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.fail(path, n.Line, "want a mapping, got %s", kindName(n))
			return false
		}
		w.WriteByte('{')
		ok := true
		for i, p := range d.pairs(n, path, depth) {
			if i > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, p.key)
			w.WriteByte(':')
			if !d.value(p.val, t.Elem(), joinPath(path, p.key), w, depth+1) {
				w.WriteString("null")
				ok = false
			}
		}
		w.WriteByte('}')
		return ok
	case reflect.String:
		if n.Kind != yaml.ScalarNode || isNull(n) || !d.plainScalar(n) {
			d.fail(path, n.Line, "want a string, got %s", kindName(n))
			return false
		}
		writeJSONString(w, n.Value)
		return true
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.fail(path, n.Line, "want true or false, got %s", kindName(n))
			return false
		}
		w.WriteString(strconv.FormatBool(b))
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var v int64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
			d.fail(path, n.Line, "want an integer, got %s", kindName(n))
			return false
		}
		if reflect.Zero(t).OverflowInt(v) {
			d.fail(path, n.Line, "integer %s out of range", n.Value)
			return false
		}
		w.WriteString(strconv.FormatInt(v, 10))
		return true
	case reflect.Float32, reflect.Float64:
		var v float64
		tag := n.ShortTag()
		if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&v) != nil ||
			math.IsInf(v, 0) || math.IsNaN(v) {
			d.fail(path, n.Line, "want a number, got %s", kindName(n))
			return false
		}
		w.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		return true
	case reflect.Interface:
		return d.generic(n, path, w, depth)
	}
	d.fail(path, n.Line, "cannot decode into %s", t)
	return false
}

// plainScalar reports whether a scalar may stand for a string: any YAML scalar does (so
// `title: 404` and `reviewed_at: 2026-08-01` work), but a JSON file must quote strings.
func (d *decoder) plainScalar(n *yaml.Node) bool {
	switch n.ShortTag() {
	case "!!str":
		return true
	case "!!int", "!!float", "!!bool", "!!timestamp", "!!binary":
		return !d.json
	}
	return false
}

// objectPairs writes the known fields of struct type t; unknown keys are problems.
func (d *decoder) objectPairs(pairs []pair, t reflect.Type, path string, w *bytes.Buffer, depth int) {
	fields := fieldsOf(t)
	w.WriteByte('{')
	first := true
	for _, p := range pairs {
		fp := joinPath(path, p.key)
		if d.pos != nil {
			d.pos.lines[fp] = p.keyNode.Line
		}
		ft, ok := fields[p.key]
		if !ok {
			d.fail(fp, p.keyNode.Line, "unknown field %q%s", p.key, suggest(p.key, fields))
			continue
		}
		if v := d.visit(p.val, depth+1); v == nil || isNull(v) {
			continue // null is the same as absent
		}
		mark := w.Len()
		if !first {
			w.WriteByte(',')
		}
		writeJSONString(w, p.key)
		w.WriteByte(':')
		if d.value(p.val, ft, fp, w, depth+1) {
			first = false
		} else {
			w.Truncate(mark)
		}
		if d.aborted {
			break
		}
	}
	w.WriteByte('}')
}

// generic writes any YAML value as JSON, keeping the key order of mappings.
func (d *decoder) generic(n *yaml.Node, path string, w *bytes.Buffer, depth int) bool {
	n = d.visit(n, depth)
	if n == nil {
		return false
	}
	switch n.Kind {
	case yaml.MappingNode:
		w.WriteByte('{')
		for i, p := range d.pairs(n, path, depth) {
			if i > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, p.key)
			w.WriteByte(':')
			if !d.generic(p.val, path, w, depth+1) {
				return false
			}
		}
		w.WriteByte('}')
		return !d.aborted
	case yaml.SequenceNode:
		w.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				w.WriteByte(',')
			}
			if !d.generic(item, path, w, depth+1) {
				return false
			}
		}
		w.WriteByte(']')
		return true
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			w.WriteString("null")
		case "!!bool":
			var b bool
			if n.Decode(&b) != nil {
				d.fail(path, n.Line, "invalid boolean %q", n.Value)
				return false
			}
			w.WriteString(strconv.FormatBool(b))
		case "!!int", "!!float":
			if isJSONNumber([]byte(n.Value)) {
				w.WriteString(n.Value)
				break
			}
			var f float64
			if n.Decode(&f) != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				d.fail(path, n.Line, "%q is not a JSON number", n.Value)
				return false
			}
			w.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		case "!!str", "!!timestamp", "!!binary", "!!merge":
			writeJSONString(w, n.Value)
		default:
			d.fail(path, n.Line, "unsupported YAML tag %s", n.Tag)
			return false
		}
		return true
	}
	d.fail(path, n.Line, "unsupported YAML node")
	return false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindName describes a node for error messages: `string "abc"`, "a list", ...
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "boolean " + v
		case "!!int", "!!float":
			return "number " + v
		case "!!str", "!!timestamp", "!!binary":
			return "string " + strconv.Quote(v)
		}
		return fmt.Sprintf("%s %q", n.Tag, v)
	}
	return "an unsupported value"
}

// suggest names the closest field to an unknown key, if one is close.
func suggest(key string, fields map[string]reflect.Type) string {
	best, bestD := "", 3
	for name := range fields {
		if dist := editDistance(strings.ToLower(key), name); dist < bestD || (dist == bestD && name < best) {
			best, bestD = name, dist
		}
	}
	if best == "" || bestD > 2 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// writeJSONString writes s as a JSON string without HTML escaping. Invalid UTF-8 becomes
// U+FFFD; DEL, U+2028 and U+2029 are always escaped, so one string has one encoding.
func writeJSONString(w *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	w.WriteByte('"')
	start := 0 // s[start:i] is pending, needing no escape
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				i++
				continue
			}
			w.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				w.WriteByte('\\')
				w.WriteByte(c)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				w.WriteString(`\u00`)
				w.WriteByte(hex[c>>4])
				w.WriteByte(hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			w.WriteString(s[start:i])
			if r == utf8.RuneError {
				w.WriteRune(utf8.RuneError) // what decoding the string yields, so forms agree
			} else {
				fmt.Fprintf(w, `\u%04x`, r)
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}
