package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// xlangSet is a cross-language set of testdata/eval/xlang: requests written in one
// language against a public catalogue described in the other (issue 17).
type xlangSet struct {
	name    string
	catalog string // the ../shared/eval set whose tools.jsonl is searched
	queries string // under testdata/eval/xlang
	// opaque replaces every tool's id and name by "hb-N" (N its line), so that only the
	// description and parameters can match, and maps the labels alike (as opaque.sh does).
	opaque bool
}

var xlangSets = []xlangSet{
	{name: "xlang_zh_on_metatool", catalog: "metatool", queries: "zh_on_metatool.jsonl"},
	{name: "xlang_en_on_hammerbench_opaque", catalog: "hammerbench_zh", queries: "en_on_hammerbench.jsonl", opaque: true},
}

// xlangQueries loads one cross-language set and its engine; ok is false when the public
// sets are absent.
func xlangQueries(tb testing.TB, x xlangSet) (*engine.Engine, []AblationQuery, bool) {
	tb.Helper()
	dir, ok := EvalDir()
	if !ok {
		return nil, nil, false
	}
	lq, err := ReadQueries(filepath.Join("../testdata/eval/xlang", x.queries))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, x.catalog, "tools.jsonl")
	if !x.opaque {
		caps, err := ImportEvalTools(path)
		if err != nil {
			tb.Fatal(err)
		}
		return qualityEngine(tb, caps), LabelledAblation(lq), true
	}
	data, ids, err := opaqueTools(path)
	if err != nil {
		tb.Fatal(err)
	}
	caps, err := registry.ImportWith(bytes.NewReader(data), registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval",
		ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range lq {
		for j, r := range lq[i].Relevant {
			o, ok := ids[r]
			if !ok {
				tb.Fatalf("%s: label %q is not a tool of %s", x.queries, r, path)
			}
			lq[i].Relevant[j] = o
		}
	}
	return qualityEngine(tb, caps), LabelledAblation(lq), true
}

// opaqueTools rewrites a tools.jsonl file with each tool's id and name "hb-N" (N its line,
// from 1) and no source, and returns the map from the original ids.
func opaqueTools(path string) ([]byte, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var out bytes.Buffer
	ids := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var t map[string]any
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		id, _ := t["id"].(string)
		o := fmt.Sprintf("hb-%d", n)
		ids[id] = o
		t["id"], t["name"] = o, o
		delete(t, "source")
		b, err := json.Marshal(t)
		if err != nil {
			return nil, nil, err
		}
		out.Write(append(b, '\n'))
	}
	return out.Bytes(), ids, sc.Err()
}
