package index

import "slices"

// rowShift sets the rows of a chunk of the column view: 1 << rowShift.
const rowShift = 10

// rowChunks holds the column view's rows by docID in chunks of 1 << rowShift, so that a
// generation patched from another (columns_patch.go) shares every chunk holding no changed
// document instead of copying every row. A chunk is never written once a generation holds
// it: with copies the chunks of the changed documents and the chunk list, nothing else.
type rowChunks [][]row

// newRowChunks returns zeroed rows for n documents.
func newRowChunks(n int) rowChunks {
	rc := make(rowChunks, (n+1<<rowShift-1)>>rowShift)
	for i := range rc {
		rc[i] = make([]row, min(n-i<<rowShift, 1<<rowShift))
	}
	return rc
}

// at returns the row of document d.
func (rc rowChunks) at(d int) *row { return &rc[d>>rowShift][d&(1<<rowShift-1)] }

// withCopies returns rows sharing rc's chunks but those holding a document of docs, which
// are copies, to be written.
func (rc rowChunks) withCopies(docs []int) rowChunks {
	out := slices.Clone(rc)
	for _, d := range docs {
		k := d >> rowShift
		if &out[k][0] == &rc[k][0] {
			out[k] = slices.Clone(rc[k])
		}
	}
	return out
}
