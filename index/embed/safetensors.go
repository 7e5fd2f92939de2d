package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// maxSafetensorsHeader bounds the JSON header of a safetensors file (the format's own
// limit is 100 MB).
const maxSafetensorsHeader = 100 << 20

// tensorInfo is one entry of a safetensors header.
type tensorInfo struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// safetensors is a parsed safetensors file: tensors by name over the data section.
type safetensors struct {
	tensors map[string]tensorInfo
	data    []byte
}

// dtypeSize returns the byte size of one element, 0 for an unknown dtype.
func dtypeSize(dt string) int64 {
	switch dt {
	case "F64", "I64", "U64":
		return 8
	case "F32", "I32", "U32":
		return 4
	case "F16", "BF16", "I16", "U16":
		return 2
	case "I8", "U8", "BOOL":
		return 1
	}
	return 0
}

// parseSafetensors reads the layout of a safetensors file: an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then
// the data the offsets point into. Every tensor is checked to lie inside the data and to
// have exactly the bytes its shape needs.
func parseSafetensors(b []byte) (*safetensors, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: safetensors file of %d bytes", ErrModel, len(b))
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > maxSafetensorsHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("%w: safetensors header length %d out of range", ErrModel, n)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("%w: safetensors header: %v", ErrModel, err)
	}
	st := &safetensors{tensors: make(map[string]tensorInfo, len(raw)), data: b[8+n:]}
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var ti tensorInfo
		if err := json.Unmarshal(msg, &ti); err != nil {
			return nil, fmt.Errorf("%w: safetensors tensor %q: %v", ErrModel, name, err)
		}
		size := dtypeSize(ti.DType)
		if size == 0 {
			return nil, fmt.Errorf("%w: tensor %q has dtype %q", ErrUnsupported, name, ti.DType)
		}
		elems := int64(1)
		for _, d := range ti.Shape {
			if d < 0 || (d > 0 && elems > math.MaxInt64/8/d) {
				return nil, fmt.Errorf("%w: tensor %q has shape %v", ErrModel, name, ti.Shape)
			}
			elems *= d
		}
		begin, end := ti.Offsets[0], ti.Offsets[1]
		if begin < 0 || end < begin || end > int64(len(st.data)) || end-begin != elems*size {
			return nil, fmt.Errorf("%w: tensor %q: offsets %v do not fit shape %v of %s in %d data bytes",
				ErrModel, name, ti.Offsets, ti.Shape, ti.DType, len(st.data))
		}
		st.tensors[name] = ti
	}
	return st, nil
}

// floats decodes a floating-point (or 8-bit integer) tensor to float32.
func (st *safetensors) floats(name string) ([]float32, error) {
	ti := st.tensors[name]
	b := st.data[ti.Offsets[0]:ti.Offsets[1]]
	size := dtypeSize(ti.DType)
	out := make([]float32, int64(len(b))/size)
	switch ti.DType {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case "F16":
		for i := range out {
			out[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	case "F64":
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	case "I8":
		for i := range out {
			out[i] = float32(int8(b[i]))
		}
	default:
		return nil, fmt.Errorf("%w: tensor %q of dtype %s is not floating point", ErrUnsupported, name, ti.DType)
	}
	return out, nil
}

// ints decodes an integer tensor to int64.
func (st *safetensors) ints(name string) ([]int64, error) {
	ti := st.tensors[name]
	b := st.data[ti.Offsets[0]:ti.Offsets[1]]
	size := dtypeSize(ti.DType)
	out := make([]int64, int64(len(b))/size)
	switch ti.DType {
	case "I32":
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case "I64":
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case "U32":
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint32(b[4*i:]))
		}
	default:
		return nil, fmt.Errorf("%w: tensor %q of dtype %s is not an integer tensor", ErrUnsupported, name, ti.DType)
	}
	return out, nil
}

// halfToFloat converts an IEEE 754 half-precision value to float32.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(math.Ldexp(float64(mant), -24)) // subnormal: mant · 2^-24
		if sign != 0 {
			f = -f
		}
		return f
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}
