package query

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"
)

func TestZZEval(t *testing.T) {
	for _, set := range []string{"hammerbench_zh", "metatool", "seal_tools"} {
		f, err := os.Open("/work/shared/eval/" + set + "/queries.jsonl")
		if err != nil {
			t.Skip()
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n, forb, browse, ew, empty := 0, 0, 0, 0, 0
		var ex []string
		for sc.Scan() {
			var q struct{ Query string }
			json.Unmarshal(sc.Bytes(), &q)
			p, err := Rules{}.Normalize(context.Background(), q.Query, nil)
			if err != nil {
				empty++
				continue
			}
			n++
			if len(p.Forbidden) > 0 {
				forb++
				if len(ex) < 12 {
					ex = append(ex, "F "+q.Query+" => "+p.Forbidden[0])
				}
			}
			if p.Browse {
				browse++
				if len(ex) < 24 {
					ex = append(ex, "B "+q.Query)
				}
			}
			if p.ExplicitWrite {
				ew++
			}
		}
		f.Close()
		t.Logf("%s: n=%d forbidden=%d browse=%d explicit=%d empty=%d", set, n, forb, browse, ew, empty)
		for _, e := range ex {
			t.Log("   ", e)
		}
	}
}
