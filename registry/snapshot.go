package registry

import (
	"fmt"
	"slices"
	"sort"
	"strings"
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
	return newSnapshot(gen, caps, effShare{})
}

// newSnapshot is NewSnapshot taking equal Effective values from share (nil: every
// capability gets its own, the reference the sharing is tested against).
func newSnapshot(gen uint64, caps []*Capability, share effShare) (*Snapshot, error) {
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
		s.fillEff(c, share)
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

// SameIDs reports whether b holds the ids of s at the same docIDs (b changes definitions
// only, adding, deleting and moving none).
func (s *Snapshot) SameIDs(b *Snapshot) bool {
	if len(s.Caps) != len(b.Caps) {
		return false
	}
	for d, c := range b.Caps {
		if o := s.Caps[d]; o != c && o.ID != c.ID {
			return false
		}
	}
	return true
}

// Apply returns the snapshot of generation gen that results from storing put (new or
// changed capabilities) and removing the ids in deleted, without changing s: it equals
// NewSnapshot(gen, caps after the change). Capabilities neither changed nor under a changed
// pack are shared with s (their Eff cannot differ); the others are shallow copies whose Eff
// is computed afresh, so a search still reading s sees s unchanged. put becomes part of the
// new snapshot and must not be changed after. Deleting an unknown id, or naming one in both
// put and deleted, is an error.
func (s *Snapshot) Apply(gen uint64, put []*Capability, deleted []string) (*Snapshot, error) {
	changed := make(map[string]*Capability, len(put))
	for _, c := range put {
		if _, dup := changed[c.ID]; dup {
			return nil, fmt.Errorf("%w: %s", ErrDuplicateID, c.ID)
		}
		changed[c.ID] = c
	}
	gone := make(map[string]bool, len(deleted))
	for _, id := range deleted {
		if _, ok := s.byID[id]; !ok || changed[id] != nil {
			return nil, fmt.Errorf("registry: snapshot: cannot delete %q (unknown, or also stored)", id)
		}
		gone[id] = true
	}
	var added []*Capability
	for _, c := range put {
		if _, ok := s.byID[c.ID]; !ok {
			added = append(added, c)
		}
	}
	if len(added) == 0 && len(gone) == 0 {
		return s.replace(gen, put), nil
	}
	slices.SortFunc(added, func(a, b *Capability) int { return strings.Compare(a.ID, b.ID) })
	out := &Snapshot{Generation: gen, Caps: make([]*Capability, 0, len(s.Caps)+len(added)-len(gone))}
	// merge the old order (minus deletions, with replacements) with the sorted additions
	i := 0
	for _, c := range s.Caps {
		for ; i < len(added) && added[i].ID < c.ID; i++ {
			out.Caps = append(out.Caps, added[i])
		}
		switch {
		case gone[c.ID]:
		case changed[c.ID] != nil:
			out.Caps = append(out.Caps, changed[c.ID])
		default:
			out.Caps = append(out.Caps, c)
		}
	}
	out.Caps = append(out.Caps, added[i:]...)
	if len(added) == 0 && len(gone) == 0 {
		out.byID = s.byID // same ids at the same positions; the map is never written again
	} else {
		out.byID = make(map[string]int, len(out.Caps))
		for d, c := range out.Caps {
			out.byID[c.ID] = d
		}
	}
	// Inheritance: a capability's Eff reads only its own fields and its parent's Eff and
	// status, so only the changed ones and everything under a changed or new capability
	// are computed again (sorted order puts every pack before its descendants).
	dirty := slices.Clone(deleted) // ids whose subtree is recomputed
	share := effShare{}
	under := func(id string) bool {
		for _, p := range dirty {
			if id == p || strings.HasPrefix(id, p+".") {
				return true
			}
		}
		return false
	}
	for d, c := range out.Caps {
		if changed[c.ID] == nil && !under(c.ID) {
			continue
		}
		if changed[c.ID] == nil {
			cp := *c
			c = &cp
			out.Caps[d] = c
		} else if c.ResourceType == TypePack {
			dirty = append(dirty, c.ID)
		}
		out.fillEff(c, share)
	}
	return out, nil
}

// replace is Apply for a change that adds and deletes no id (put: capabilities of s's ids,
// each once): it touches only the changed positions and the subtrees of changed packs, so
// it costs O(changed) but for the copy of the capability pointers, where the general merge
// looks every capability up by id.
func (s *Snapshot) replace(gen uint64, put []*Capability) *Snapshot {
	out := &Snapshot{Generation: gen, Caps: slices.Clone(s.Caps), byID: s.byID}
	var redo []int // positions whose Eff is computed again
	isNew := make(map[int]bool, len(put))
	for _, c := range put {
		d := s.byID[c.ID]
		out.Caps[d] = c
		isNew[d] = true
		redo = append(redo, d)
		if c.ResourceType != TypePack {
			continue
		}
		// its descendants: ids starting with its own are contiguous in the sorted order
		for j := d + 1; j < len(out.Caps) && strings.HasPrefix(out.Caps[j].ID, c.ID); j++ {
			if strings.HasPrefix(out.Caps[j].ID, c.ID+".") {
				redo = append(redo, j)
			}
		}
	}
	slices.Sort(redo)
	share := effShare{}
	for _, d := range slices.Compact(redo) { // a pack before its descendants
		c := out.Caps[d]
		if !isNew[d] {
			cp := *c
			c = &cp
			out.Caps[d] = c
		}
		out.fillEff(c, share)
	}
	return out
}

// fillEff computes c.Eff from its parent in s (already filled). A pack gets an Effective of
// its own (it holds the Packs of its children); another capability takes one from share
// when one of its siblings' is equal.
func (s *Snapshot) fillEff(c *Capability, share effShare) {
	e := Effective{Enabled: c.Enabled == nil || *c.Enabled, Tenants: c.Tenants, ACL: c.ACL}
	var pe *Effective
	if p, ok := s.Get(Parent(c.ID)); ok {
		pe = p.Eff
		if e.Packs = pe.below; e.Packs == nil { // a parent that is not a pack (lint refuses it)
			e.Packs = slices.Clip(append(slices.Clone(pe.Packs), p.ID))
		}
		e.Enabled = e.Enabled && pe.Enabled && p.Status != StatusOffline
		if len(e.Tenants) == 0 {
			e.Tenants = pe.Tenants
		}
		if len(c.ACL.Discover)+len(c.ACL.Describe)+len(c.ACL.Execute) == 0 {
			e.ACL = ACL{Discover: pe.ACL.Discover, Describe: pe.ACL.Describe, Execute: pe.ACL.Execute}
		}
		e.ACL.Deny = mergeUnique(c.ACL.Deny, pe.ACL.Deny)
	}
	if c.ResourceType == TypePack {
		e.below = slices.Clip(append(slices.Clone(e.Packs), c.ID))
		c.Eff = &e
		return
	}
	c.Eff = share.get(pe, &e)
}
