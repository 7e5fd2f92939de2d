package server

// DiffLine is one line of a version diff: Op is " " (in both), "-" (only in a) or "+"
// (only in b).
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// maxDiffCells bounds the LCS table (lines of a × lines of b); past it the diff is the
// whole of a removed and the whole of b added, which is still correct, only coarse.
const maxDiffCells = 4 << 20

// diffLines is a line diff of a and b by longest common subsequence.
func diffLines(a, b []string) []DiffLine {
	// Common prefix and suffix first: versions mostly differ in a few lines.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]DiffLine, 0, len(a)+len(b))
	for _, t := range a[:pre] {
		out = append(out, DiffLine{" ", t})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > maxDiffCells {
		for _, t := range ma {
			out = append(out, DiffLine{"-", t})
		}
		for _, t := range mb {
			out = append(out, DiffLine{"+", t})
		}
	} else {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		w := len(mb) + 1
		lcs := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				out = append(out, DiffLine{" ", ma[i]})
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				out = append(out, DiffLine{"-", ma[i]})
				i++
			default:
				out = append(out, DiffLine{"+", mb[j]})
				j++
			}
		}
	}
	for _, t := range a[len(a)-suf:] {
		out = append(out, DiffLine{" ", t})
	}
	return out
}
