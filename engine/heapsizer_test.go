package engine

import (
	"reflect"
	"sort"
	"unsafe"
)

// sizeClasses are the Go runtime's small-object size classes (runtime/sizeclasses.go): an
// allocation of n bytes takes the first class of at least n bytes.
var sizeClasses = []uintptr{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
	240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280,
	1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784,
	6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480,
	21760, 24576, 27264, 28672, 32768}

// allocSize is the heap an allocation of n bytes takes; pointers says it holds pointers,
// which above 512 bytes costs an 8-byte header (the runtime's malloc header).
func allocSize(n uintptr, pointers bool) uintptr {
	if n == 0 {
		return 0
	}
	if pointers && n > 512 {
		n += 8
	}
	i := sort.Search(len(sizeClasses), func(i int) bool { return sizeClasses[i] >= n })
	if i == len(sizeClasses) {
		return (n + 8191) &^ 8191
	}
	return sizeClasses[i]
}

// heapSizer adds up the heap bytes reachable from values, each allocation counted once (by
// its address, so a string or list shared by many capabilities counts once) and rounded up
// to its size class, charged to the field that reached it first. Maps are approximated.
type heapSizer struct {
	seen    map[uintptr]bool
	byField map[string]uintptr
}

func newHeapSizer() *heapSizer {
	return &heapSizer{seen: map[uintptr]bool{}, byField: map[string]uintptr{}}
}

func (h *heapSizer) charge(field string, p uintptr, n uintptr, pointers bool) bool {
	if p == 0 || n == 0 || h.seen[p] {
		return false
	}
	h.seen[p] = true
	h.byField[field] += allocSize(n, pointers)
	return true
}

// holdsPointers reports whether values of t hold pointers (strings, slices, maps, pointers,
// interfaces, or structs and arrays of them).
func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func:
		return true
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if holdsPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// inner adds what v (held inline somewhere already charged) points to.
func (h *heapSizer) inner(field string, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if len(s) > 0 {
			h.charge(field, uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(len(s)), false)
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		if h.charge(field, v.Pointer(), uintptr(v.Cap())*v.Type().Elem().Size(), holdsPointers(v.Type().Elem())) {
			for i := 0; i < v.Len(); i++ {
				h.inner(field, v.Index(i))
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if h.charge(field, v.Pointer(), v.Type().Elem().Size(), holdsPointers(v.Type().Elem())) {
			h.inner(field, v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			h.inner(field, v.Field(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		// approximate: a map of n entries as 48 bytes plus its key and value bytes twice over
		kv := v.Type().Key().Size() + v.Type().Elem().Size()
		h.charge(field, v.Pointer(), 48+uintptr(v.Len())*kv*2, true)
		it := v.MapRange()
		for it.Next() {
			h.inner(field, it.Key())
			h.inner(field, it.Value())
		}
	}
}

// fields charges the struct *p itself to "(struct)" and then each top-level field's
// reachable bytes to that field's name.
func (h *heapSizer) fields(p any) {
	v := reflect.ValueOf(p)
	if !h.charge("(struct)", v.Pointer(), v.Type().Elem().Size(), true) {
		return
	}
	s := v.Elem()
	for i := 0; i < s.NumField(); i++ {
		name := s.Type().Field(i).Name
		f := s.Field(i)
		if f.Kind() == reflect.Struct {
			for j := 0; j < f.NumField(); j++ {
				h.inner(name+"."+f.Type().Field(j).Name, f.Field(j))
			}
			continue
		}
		h.inner(name, f)
	}
}
