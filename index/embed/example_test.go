package embed_test

import (
	"fmt"

	"github.com/capdex/capdex/index/embed"
)

func ExampleHashed() {
	h := embed.NewHashed()
	q := h.EmbedSparse("删除日程")
	same := h.EmbedSparse("delete a schedule event")
	other := h.EmbedSparse("create a flight booking")
	fmt.Println(h.ID())
	fmt.Println(q.Dot(same) > q.Dot(other))
	// Output:
	// hashed-v2-262144
	// true
}
