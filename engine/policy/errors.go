package policy

import "errors"

// Sentinel errors of the policy package.
var (
	// ErrBadConstraint is returned by MatchVersion for a constraint it cannot parse.
	ErrBadConstraint = errors.New("policy: invalid version constraint")
	// ErrBadVersion is returned by CompareVersions and MatchVersion for a version that is
	// not dot-separated numbers with an optional "v" prefix and "-prerelease" suffix.
	ErrBadVersion = errors.New("policy: invalid version")
)
