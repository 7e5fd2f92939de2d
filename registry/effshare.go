package registry

import "slices"

// effShare hands out one *Effective per distinct inheritance among the children of a pack
// while a snapshot is built: most actions of a pack inherit all of it (or repeat its acl),
// so their Effective values are equal and one copy serves them all (an Effective is 176
// bytes, a sixth of a Capability). Keyed by the parent's Effective (nil for top-level
// capabilities); at most shareWays distinct values are kept per parent, a child unlike
// them all keeps its own.
type effShare map[*Effective][]*Effective

// shareWays bounds the values compared per parent, so a pack whose children all differ
// costs a few comparisons per child.
const shareWays = 4

// get returns an Effective equal to *e: a sibling's when one is, else e, remembered. A nil
// m shares nothing (returns e).
func (m effShare) get(parent, e *Effective) *Effective {
	if m == nil {
		return e
	}
	seen := m[parent]
	for _, x := range seen {
		if x.equal(e) {
			return x
		}
	}
	if len(seen) < shareWays {
		m[parent] = append(seen, e)
	}
	return e
}

// equal reports whether a and b hold the same values (the lists compared element by
// element).
func (a *Effective) equal(b *Effective) bool {
	return a.Enabled == b.Enabled && slices.Equal(a.Tenants, b.Tenants) && slices.Equal(a.Packs, b.Packs) &&
		slices.Equal(a.below, b.below) && a.ACL.equal(b.ACL)
}

func (a ACL) equal(b ACL) bool {
	return slices.Equal(a.Discover, b.Discover) && slices.Equal(a.Describe, b.Describe) &&
		slices.Equal(a.Execute, b.Execute) && slices.Equal(a.Deny, b.Deny)
}
