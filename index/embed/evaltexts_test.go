package embed

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// evalTexts returns up to max query texts and tool descriptions of the ../shared/eval sets
// (nil when the sets are not checked out next to the repository).
func evalTexts(tb testing.TB, queriesOnly bool, max int) []string {
	tb.Helper()
	root := filepath.Join("..", "..", "..", "shared", "eval")
	sets, _ := filepath.Glob(filepath.Join(root, "*"))
	var out []string
	for _, set := range sets {
		files := []string{"queries.jsonl"}
		if !queriesOnly {
			files = append(files, "tools.jsonl")
		}
		for _, name := range files {
			f, err := os.Open(filepath.Join(set, name))
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			n := 0
			for sc.Scan() && n < max {
				var rec struct {
					Query       string `json:"query"`
					Name        string `json:"name"`
					Description string `json:"description"`
				}
				if json.Unmarshal(sc.Bytes(), &rec) != nil {
					continue
				}
				if rec.Query != "" {
					out = append(out, rec.Query)
				}
				if rec.Description != "" {
					out = append(out, rec.Name+" "+rec.Description)
				}
				n++
			}
			f.Close()
		}
	}
	return out
}

func BenchmarkHashedEmbedSparseEval(b *testing.B) {
	texts := evalTexts(b, true, 400)
	if len(texts) == 0 {
		b.Skip("no ../shared/eval sets")
	}
	h := NewHashed()
	for _, impl := range []struct {
		name string
		f    func(string) SparseVector
	}{{"new", h.EmbedSparse}, {"ref", h.refEmbedSparse}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			cpu := threadCPU()
			i := 0
			for b.Loop() {
				impl.f(texts[i%len(texts)])
				i++
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
