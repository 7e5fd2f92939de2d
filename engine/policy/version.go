package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// version is a parsed dotted version: numeric parts and an optional pre-release tag.
type version struct {
	parts []uint64
	pre   string
}

func parseVersion(s string) (version, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	if i := strings.IndexByte(s, '+'); i >= 0 { // build metadata never orders
		s = s[:i]
	}
	var v version
	if i := strings.IndexByte(s, '-'); i >= 0 {
		v.pre = s[i+1:]
		s = s[:i]
		if v.pre == "" {
			return version{}, fmt.Errorf("%w: %q", ErrBadVersion, s)
		}
	}
	if s == "" {
		return version{}, fmt.Errorf("%w: empty", ErrBadVersion)
	}
	for p := range strings.SplitSeq(s, ".") {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || p == "" || p[0] == '+' {
			return version{}, fmt.Errorf("%w: %q", ErrBadVersion, s)
		}
		v.parts = append(v.parts, n)
	}
	return v, nil
}

func (a version) compare(b version) int {
	n := max(len(a.parts), len(b.parts))
	for i := range n {
		var x, y uint64
		if i < len(a.parts) {
			x = a.parts[i]
		}
		if i < len(b.parts) {
			y = b.parts[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	// A pre-release sorts before its release; pre-releases compare as strings.
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	case a.pre < b.pre:
		return -1
	}
	return 1
}

// CompareVersions compares two dotted versions ("2.4", "v2.4.1", "3.0.0-rc1") numerically
// part by part, missing parts counting as zero, a pre-release sorting before its release.
// It returns -1, 0 or +1, or ErrBadVersion.
func CompareVersions(a, b string) (int, error) {
	va, err := parseVersion(a)
	if err != nil {
		return 0, err
	}
	vb, err := parseVersion(b)
	if err != nil {
		return 0, err
	}
	return va.compare(vb), nil
}

// MatchVersion reports whether version v satisfies constraint, a comma-separated AND of
// clauses "OP VERSION" with OP one of >=, >, <=, <, =, == or != (no operator means =).
// An empty constraint matches everything. It returns ErrBadConstraint or ErrBadVersion for
// text it cannot parse.
func MatchVersion(constraint, v string) (bool, error) {
	have, err := parseVersion(v)
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(constraint) == "" {
		return true, nil
	}
	ok := true
	for clause := range strings.SplitSeq(constraint, ",") {
		clause = strings.TrimSpace(clause)
		if clause == "" {
			return false, fmt.Errorf("%w: empty clause in %q", ErrBadConstraint, constraint)
		}
		op := ""
		for _, o := range []string{">=", "<=", "==", "!=", ">", "<", "="} {
			if strings.HasPrefix(clause, o) {
				op = o
				break
			}
		}
		want, err := parseVersion(clause[len(op):])
		if err != nil {
			return false, fmt.Errorf("%w: %q", ErrBadConstraint, clause)
		}
		c := have.compare(want)
		switch op {
		case ">=":
			ok = ok && c >= 0
		case ">":
			ok = ok && c > 0
		case "<=":
			ok = ok && c <= 0
		case "<":
			ok = ok && c < 0
		case "!=":
			ok = ok && c != 0
		default:
			ok = ok && c == 0
		}
	}
	return ok, nil
}
