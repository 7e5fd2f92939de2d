package text_test

import (
	"fmt"

	"github.com/capdex/capdex/index/text"
)

func ExampleAnalyze() {
	fmt.Println(text.Analyze("Deleting schedules in maintenance.codex.diagnose"))
	fmt.Println(text.Analyze("删除日程"))
	// Output:
	// [delet schedul mainten codex diagnos]
	// [删 删除 除 除日 日 日程 程]
}

func ExampleWords() {
	fmt.Println(text.Words("queryPassengerTrainOrder HTTPServer Codex更新"))
	// Output: [query passenger train order http server codex 更新]
}

func ExampleConceptsIn() {
	fmt.Println(text.ConceptsIn("删除日程"))
	fmt.Println(text.ConceptsIn("please remove the calendar event"))
	fmt.Println(text.Concepts("upgrading"))
	// Output:
	// [delete schedule]
	// [delete schedule event]
	// [update]
}
