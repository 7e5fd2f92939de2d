package registry

// NewSnapshotUnshared is NewSnapshot giving every capability an Effective of its own: the
// reference of the shared ones (TestEffectiveSharedSameAsOwn).
func NewSnapshotUnshared(gen uint64, caps []*Capability) (*Snapshot, error) {
	return newSnapshot(gen, caps, nil)
}
