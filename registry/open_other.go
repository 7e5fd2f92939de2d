//go:build !unix

package registry

// openNonBlocking is 0 where there is no O_NONBLOCK; the type check before opening is all.
const openNonBlocking = 0
