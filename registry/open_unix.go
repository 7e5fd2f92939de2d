//go:build unix

package registry

import "syscall"

// openNonBlocking keeps the open of a definition file from blocking should a FIFO be
// swapped in after its type was checked (regular files ignore it).
const openNonBlocking = syscall.O_NONBLOCK
