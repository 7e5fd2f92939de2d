package text

import (
	"slices"
	"testing"
)

func TestClauses(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"book a hotel", []string{"book a hotel"}},
		{"Book a hotel in Paris. Then check the weather there.", []string{"Book a hotel in Paris.", "Then check the weather there."}},
		{"Multiply 8.7 by 2; then add 1!  Done?", []string{"Multiply 8.7 by 2;", "then add 1!", "Done?"}},
		{"Say \"What time is it?\" in French.", []string{"Say \"What time is it?\" in French."}},
		{"use e.g., a tool", []string{"use e.g., a tool"}},
		{"line one\nline two", []string{"line one", "line two"}},
		{"查一下天气。再订一张票！好吗", []string{"查一下天气。", "再订一张票！", "好吗"}},
		{"a. b. c. d. e. f. g. h. i. j.", []string{"a.", "b.", "c.", "d.", "e.", "f.", "g.", "h. i. j."}},
		{". . .", []string{".", ".", "."}},
	} {
		if got := Clauses(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Clauses(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
