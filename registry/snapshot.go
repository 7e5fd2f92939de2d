package registry

import (
	"fmt"
	"slices"
	"sort"
)

// Snapshot is an immutable, id-sorted view of one registry generation with pack inheritance
// resolved. A capability's position in Caps is its dense docID in every index built from it.
type Snapshot struct {
	// Generation is the registry generation this snapshot was taken at.
	Generation uint64
	// Caps are sorted by id; callers must not modify them.
	Caps []*Capability
	byID map[string]int
}

// NewSnapshot sorts caps by id, checks ids are unique and fills each Capability.Eff from its
// ancestor packs. The capabilities become part of the snapshot and must not be changed after.
func NewSnapshot(gen uint64, caps []*Capability) (*Snapshot, error) {
	s := &Snapshot{Generation: gen, Caps: slices.Clone(caps), byID: make(map[string]int, len(caps))}
	sort.Slice(s.Caps, func(i, j int) bool { return s.Caps[i].ID < s.Caps[j].ID })
	for i, c := range s.Caps {
		if _, dup := s.byID[c.ID]; dup {
			return nil, fmt.Errorf("%w: %s", ErrDuplicateID, c.ID)
		}
		s.byID[c.ID] = i
	}
	// Sorted order puts every pack before its descendants, so one pass resolves inheritance.
	for _, c := range s.Caps {
		c.Eff = Effective{Enabled: c.Enabled == nil || *c.Enabled, Tenants: c.Tenants, ACL: c.ACL}
		p, ok := s.Get(Parent(c.ID))
		if !ok {
			continue
		}
		pe := p.Eff
		c.Eff.Packs = append(slices.Clone(pe.Packs), p.ID)
		c.Eff.Enabled = c.Eff.Enabled && pe.Enabled && p.Status != StatusOffline
		if len(c.Eff.Tenants) == 0 {
			c.Eff.Tenants = pe.Tenants
		}
		if len(c.ACL.Discover)+len(c.ACL.Describe)+len(c.ACL.Execute) == 0 {
			c.Eff.ACL = ACL{Discover: pe.ACL.Discover, Describe: pe.ACL.Describe, Execute: pe.ACL.Execute}
		}
		c.Eff.ACL.Deny = mergeUnique(c.ACL.Deny, pe.ACL.Deny)
	}
	return s, nil
}

func mergeUnique(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// Get returns the capability with the id.
func (s *Snapshot) Get(id string) (*Capability, bool) {
	i, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return s.Caps[i], true
}

// DocID returns the dense position of id in Caps.
func (s *Snapshot) DocID(id string) (uint32, bool) {
	i, ok := s.byID[id]
	return uint32(i), ok
}

// Len is the number of capabilities.
func (s *Snapshot) Len() int { return len(s.Caps) }
