package registry

import (
	"os"
	"testing"
	"time"
	"fmt"
)

func TestZZSmoke(t *testing.T) {
	for _, s := range []string{"metatool", "seal_tools", "hammerbench_zh", "livemcpbench"} {
		f, _ := os.Open("/work/shared/eval/" + s + "/tools.jsonl")
		start := time.Now()
		caps, err := Import(f, "auto")
		d := time.Since(start)
		f.Close()
		n := 0
		if err != nil { fmt.Println(err.Error()[:min(2000, len(err.Error()))]) }
		for _, c := range caps { if c.ResourceType == TypePack { n++ } }
		fmt.Println(s, len(caps), "packs", n, d, err == nil)
		if len(caps) > 0 { fmt.Printf("%+v\n", *caps[len(caps)-1]); fmt.Printf("%+v\n", *caps[0]) }
		start = time.Now()
		errs := Lint(caps)
		fmt.Println("lint", time.Since(start), len(errs))
	}
}
