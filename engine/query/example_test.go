package query_test

import (
	"context"
	"fmt"

	"github.com/capdex/capdex/engine/query"
)

func ExampleRules_Normalize() {
	p, err := query.Rules{}.Normalize(context.Background(), "先检查原因，不要直接更新", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("intents:", p.Intents)
	fmt.Println("constraints:", p.Constraints)
	fmt.Println("forbidden:", p.Forbidden)
	fmt.Println("plan:", query.Plan(p, nil, nil))
	// Output:
	// intents: [diagnose]
	// constraints: [read_first no_update]
	// forbidden: [update upgrade]
	// plan: [exact lexical semantic metadata history]
}
