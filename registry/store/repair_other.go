//go:build !unix

package store

// removeEmptyLogs is a no-op where flock is not available.
func removeEmptyLogs(string) error { return nil }
