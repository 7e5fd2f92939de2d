package rank

import "errors"

// Sentinel errors of the rank package.
var (
	// ErrBadThresholds is returned by DecodeThresholds for JSON that is not a thresholds
	// object, has an unknown version, or holds negative or non-finite values.
	ErrBadThresholds = errors.New("rank: invalid thresholds")
)
