package store

import (
	"encoding/binary"
	"fmt"

	"github.com/capdex/capdex/registry"
)

// Key prefixes; see the key schema in the package documentation.
const (
	pfxDef    = "def/"
	pfxActive = "active/"
	pfxAudit  = "audit/"
	pfxTok    = "tok/"
	pfxHistU  = "hist/u/"
	pfxHistP  = "hist/p/"
	pfxBlob   = "blob/"
	pfxCache  = "cache/"
	pfxSecret = "secret/"
	pfxQLog   = "qlog/"
	// pfxFeedback holds FeedbackRecord values (PutFeedback).
	pfxFeedback = "fb/"
)

// Single meta keys.
var (
	keyFormat = []byte("meta/format")
	keyGen    = []byte("meta/gen")
	keyHead   = []byte("meta/audit")
	keyStage  = []byte("meta/stage")
	// keyAuditKey marks the first audit record sealed with the audit key (auditKeyMark).
	keyAuditKey = []byte("meta/auditkey")
)

// formatVersion is the on-disk format this code reads and writes.
const formatVersion = "1"

func be64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func cat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// defKey is def/<id>/<version u64 BE>.
func defKey(id string, version int) []byte {
	return cat([]byte(pfxDef), []byte(id), []byte{'/'}, be64(uint64(version)))
}

// activeKey is active/<id>/<generation u64 BE>.
func activeKey(id string, gen uint64) []byte {
	return cat([]byte(pfxActive), []byte(id), []byte{'/'}, be64(gen))
}

// activeIDPrefix is active/<id>/, the prefix of every pointer of one id.
func activeIDPrefix(id string) []byte {
	return cat([]byte(pfxActive), []byte(id), []byte{'/'})
}

// parseActiveKey splits active/<id>/<gen>. Ids never hold '/', so the split is exact.
func parseActiveKey(k []byte) (id string, gen uint64, ok bool) {
	if len(k) < len(pfxActive)+1+1+8 || k[len(k)-9] != '/' {
		return "", 0, false
	}
	return string(k[len(pfxActive) : len(k)-9]), binary.BigEndian.Uint64(k[len(k)-8:]), true
}

// AuditKey returns the Badger key of audit record seq (audit/<seq u64 BE>). It is exported
// for tests and tools that inspect or damage records with RawGet and RawSet.
func AuditKey(seq uint64) []byte {
	return cat([]byte(pfxAudit), be64(seq))
}

func histKey(pfx, scope, id string) []byte {
	return cat([]byte(pfx), []byte(scope), []byte{0}, []byte(id))
}

// pointer is the value of an active/<id>/<gen> key: which version of id is current as of gen.
// Encoding: version u64 BE, flags byte, then the status override (may be empty).
type pointer struct {
	Version int
	Deleted bool
	// NewDef says this pointer's commit wrote def/<id>/<Version>; a rollback deletes it.
	NewDef bool
	// Status overrides the stored definition's status when not empty (set by SetStatus).
	Status registry.Status
}

const (
	flagDeleted = 1 << iota
	flagNewDef
)

func (p pointer) encode() []byte {
	b := make([]byte, 9, 9+len(p.Status))
	binary.BigEndian.PutUint64(b, uint64(p.Version))
	if p.Deleted {
		b[8] |= flagDeleted
	}
	if p.NewDef {
		b[8] |= flagNewDef
	}
	return append(b, p.Status...)
}

func decodePointer(b []byte) (pointer, error) {
	if len(b) < 9 {
		return pointer{}, fmt.Errorf("%w: pointer of %d bytes", ErrCorrupt, len(b))
	}
	return pointer{
		Version: int(binary.BigEndian.Uint64(b)),
		Deleted: b[8]&flagDeleted != 0,
		NewDef:  b[8]&flagNewDef != 0,
		Status:  registry.Status(b[9:]),
	}, nil
}
