package embed

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tensor is one tensor for writeSafetensors.
type tensor struct {
	name  string
	dtype string
	shape []int64
	data  []byte
}

// safetensorsBytes encodes tensors in the safetensors layout.
func safetensorsBytes(tb testing.TB, ts []tensor) []byte {
	tb.Helper()
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, t := range ts {
		header[t.name] = map[string]any{"dtype": t.dtype, "shape": t.shape, "data_offsets": []int{len(data), len(data) + len(t.data)}}
		data = append(data, t.data...)
	}
	h, err := json.Marshal(header)
	if err != nil {
		tb.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(out, h...)
	return append(out, data...)
}

func f32Bytes(v []float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// f16Bytes encodes values that are exact in half precision (small integers, halves).
func f16Bytes(v []float32) []byte {
	var b []byte
	for _, x := range v {
		bits := math.Float32bits(x)
		sign := uint16(bits>>16) & 0x8000
		var h uint16
		if x != 0 {
			exp := int((bits>>23)&0xff) - 127 + 15
			h = sign | uint16(exp)<<10 | uint16((bits>>13)&0x3ff)
		} else {
			h = sign
		}
		b = binary.LittleEndian.AppendUint16(b, h)
	}
	return b
}

// tinyVocab is a WordPiece vocabulary of 20 tokens.
var tinyVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "un", "##believ", "##able", "delete",
	"schedule", "删", "除", ",", "!", "##s", "run", "##ning", "cafe", "the",
}

const tinyDim = 8

// tinyRows: row i is (1 + i/8) at position i%8, zero elsewhere.
func tinyRows() []float32 {
	rows := make([]float32, len(tinyVocab)*tinyDim)
	for i := range tinyVocab {
		rows[i*tinyDim+i%tinyDim] = float32(1 + i/tinyDim)
	}
	return rows
}

func wordPieceJSON(tb testing.TB) []byte {
	tb.Helper()
	vocab := map[string]int{}
	for i, t := range tinyVocab {
		vocab[t] = i
	}
	tok := map[string]any{
		"version":       "1.0",
		"added_tokens":  []any{},
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, err := json.Marshal(tok)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// writeModel writes a model directory and returns its path.
func writeModel(tb testing.TB, tokJSON []byte, st []byte, config string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "tiny-model")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write("tokenizer.json", tokJSON)
	write("model.safetensors", st)
	if config != "" {
		write("config.json", []byte(config))
	}
	return dir
}

func approxEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}

func vec(entries map[int]float64) []float32 {
	v := make([]float32, tinyDim)
	for i, x := range entries {
		v[i] = float32(x)
	}
	return v
}

func TestModel2VecWordPiece(t *testing.T) {
	rows := tinyRows()
	shape := []int64{int64(len(tinyVocab)), tinyDim}
	r2, r6 := 1/math.Sqrt2, 1/math.Sqrt(6)
	cases := []struct {
		text string
		ids  []int
		want []float32
	}{
		{text: "hello world", ids: []int{4, 5}, want: vec(map[int]float64{4: r2, 5: r2})},
		{text: "Unbelievable", ids: []int{6, 7, 8}, want: vec(map[int]float64{0: 2 * r6, 6: r6, 7: r6})},
		{text: "删除", ids: []int{11, 12}, want: vec(map[int]float64{3: r2, 4: r2})},
		{text: "Hello, WORLD!", ids: []int{4, 13, 5, 14}, want: vec(map[int]float64{4: 1 / math.Sqrt(14), 5: 3 / math.Sqrt(14), 6: 2 / math.Sqrt(14)})},
		{text: "Café", ids: []int{18}, want: vec(map[int]float64{2: 1})},
		{text: "running runs", ids: []int{16, 17, 16, 15}, want: vec(map[int]float64{0: 6.0 / 7, 1: 3.0 / 7, 7: 2.0 / 7})},
		{text: "xyz hello", ids: []int{4}, want: vec(map[int]float64{4: 1})}, // unknown word dropped
		{text: "xyz", ids: []int{}, want: make([]float32, tinyDim)},
		{text: "", ids: []int{}, want: make([]float32, tinyDim)},
	}
	for _, dtype := range []string{"F32", "F16"} {
		t.Run(dtype, func(t *testing.T) {
			data := f32Bytes(rows)
			if dtype == "F16" {
				data = f16Bytes(rows)
			}
			dir := writeModel(t, wordPieceJSON(t), safetensorsBytes(t, []tensor{{"embeddings", dtype, shape, data}}), "")
			m, err := LoadModel2Vec(dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.Dim() != tinyDim || !strings.HasPrefix(m.ID(), "model2vec-tiny-model-") {
				t.Fatalf("Dim %d ID %q", m.Dim(), m.ID())
			}
			texts := make([]string, len(cases))
			for i, c := range cases {
				texts[i] = c.text
			}
			got, err := m.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				if ids := m.Tokens(c.text); !slices.Equal(ids, c.ids) {
					t.Errorf("Tokens(%q) = %v, want %v", c.text, ids, c.ids)
				}
				if !approxEqual(got[i], c.want) {
					t.Errorf("Embed(%q) = %v, want %v", c.text, got[i], c.want)
				}
			}
		})
	}
}

func TestModel2VecWeightsMappingConfig(t *testing.T) {
	rows := tinyRows()
	shape := []int64{int64(len(tinyVocab)), tinyDim}
	weights := make([]float32, len(tinyVocab))
	for i := range weights {
		weights[i] = 1
	}
	weights[4] = 3 // "hello" counts three times
	mapping := make([]byte, 0, 4*len(tinyVocab))
	for i := range tinyVocab {
		row := i
		if i == 5 { // "world" reads the row of "delete"
			row = 9
		}
		mapping = binary.LittleEndian.AppendUint32(mapping, uint32(row))
	}
	st := safetensorsBytes(t, []tensor{
		{"embeddings", "F32", shape, f32Bytes(rows)},
		{"weights", "F32", []int64{int64(len(tinyVocab))}, f32Bytes(weights)},
		{"mapping", "I32", []int64{int64(len(tinyVocab))}, mapping},
	})
	m, err := LoadModel2Vec(writeModel(t, wordPieceJSON(t), st, ""))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Embed(context.Background(), []string{"hello world"})
	if err != nil {
		t.Fatal(err)
	}
	// hello: 3·e4; world → row 9: 2·e1. Mean then normalise: (2/√13)·e1 + (3/√13)·e4.
	if want := vec(map[int]float64{1: 2 / math.Sqrt(13), 4: 3 / math.Sqrt(13)}); !approxEqual(got[0], want) {
		t.Fatalf("with weights and mapping: %v, want %v", got[0], want)
	}

	raw, err := LoadModel2Vec(writeModel(t, wordPieceJSON(t),
		safetensorsBytes(t, []tensor{{"embeddings", "F32", shape, f32Bytes(rows)}}), `{"normalize": false}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err = raw.Embed(context.Background(), []string{"hello world"})
	if err != nil {
		t.Fatal(err)
	}
	if want := vec(map[int]float64{4: 0.5, 5: 0.5}); !approxEqual(got[0], want) {
		t.Fatalf("normalize false: %v, want %v", got[0], want)
	}
	if !strings.HasSuffix(raw.ID(), "-raw") {
		t.Fatalf("ID of an unnormalised model %q", raw.ID())
	}
}

func TestModel2VecUnigram(t *testing.T) {
	pieces := [][2]any{
		{"<unk>", 0.0}, {"▁", -2.0}, {"▁hel", -1.0}, {"lo", -1.0}, {"▁hello", -1.5},
		{"h", -3.0}, {"e", -3.0}, {"l", -3.0}, {"o", -3.0}, {"▁world", -1.0}, {"▁删除", -1.0},
	}
	tok, err := json.Marshal(map[string]any{
		"normalizer":    map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFKC"}, map[string]any{"type": "Lowercase"}}},
		"pre_tokenizer": map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
		"model":         map[string]any{"type": "Unigram", "unk_id": 0, "vocab": pieces},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]float32, len(pieces)*tinyDim)
	for i := range pieces {
		rows[i*tinyDim+i%tinyDim] = 1
	}
	m, err := LoadModel2Vec(writeModel(t, tok, safetensorsBytes(t, []tensor{{"emb", "F32", []int64{int64(len(pieces)), tinyDim}, f32Bytes(rows)}}), ""))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		want []int
	}{
		{name: "best segmentation", in: "Hello World", want: []int{4, 9}},
		{name: "pieces", in: "hello", want: []int{4}},
		{name: "unknown chars dropped", in: "hex", want: []int{1, 5, 6}}, // ▁ h e, x unknown
		{name: "full-width folded", in: "ＨＥＬＬＯ", want: []int{4}},
		{name: "cjk piece", in: "删除", want: []int{10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Tokens(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestModel2VecWordLevelAndPreTokenizers(t *testing.T) {
	vocab := map[string]int{"[UNK]": 0, "hello": 1, "world": 2, "-": 3, "42": 4, "4": 5, "2": 6}
	tok, _ := json.Marshal(map[string]any{
		"normalizer": map[string]any{"type": "Lowercase"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Whitespace"},
			map[string]any{"type": "Digits", "individual_digits": true},
		}},
		"model": map[string]any{"type": "WordLevel", "unk_token": "[UNK]", "vocab": vocab},
	})
	rows := make([]float32, 7*tinyDim)
	for i := 0; i < 7; i++ {
		rows[i*tinyDim+i] = 1
	}
	m, err := LoadModel2Vec(writeModel(t, tok, safetensorsBytes(t, []tensor{{"embeddings", "F32", []int64{7, tinyDim}, f32Bytes(rows)}}), ""))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Tokens("Hello-World 42 zzz"), []int{1, 3, 2, 5, 6}; !slices.Equal(got, want) {
		t.Fatalf("Tokens = %v, want %v", got, want)
	}
}

func TestModel2VecLoadErrors(t *testing.T) {
	shape := []int64{int64(len(tinyVocab)), tinyDim}
	good := safetensorsBytes(t, []tensor{{"embeddings", "F32", shape, f32Bytes(tinyRows())}})
	truncated := safetensorsBytes(t, []tensor{{"embeddings", "F32", shape, f32Bytes(tinyRows())[:100]}})
	badLen := binary.LittleEndian.AppendUint64(nil, 1<<40)
	tooFewRows := safetensorsBytes(t, []tensor{{"embeddings", "F32", []int64{5, tinyDim}, f32Bytes(make([]float32, 5*tinyDim))}})
	intEmb := safetensorsBytes(t, []tensor{{"embeddings", "I32", []int64{int64(len(tinyVocab)), tinyDim}, make([]byte, 4*len(tinyVocab)*tinyDim)}})
	bpe, _ := json.Marshal(map[string]any{"model": map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{}}})
	byteLevel, _ := json.Marshal(map[string]any{"pre_tokenizer": map[string]any{"type": "ByteLevel"}, "model": map[string]any{"type": "WordPiece", "vocab": map[string]int{"a": 0}}})
	tests := []struct {
		name   string
		dir    func(t *testing.T) string
		target error
	}{
		{name: "missing dir", dir: func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, target: ErrModel},
		{name: "bad tokenizer json", dir: func(t *testing.T) string { return writeModel(t, []byte("{"), good, "") }, target: ErrModel},
		{name: "bpe", dir: func(t *testing.T) string { return writeModel(t, bpe, good, "") }, target: ErrUnsupported},
		{name: "byte level", dir: func(t *testing.T) string { return writeModel(t, byteLevel, good, "") }, target: ErrUnsupported},
		{name: "short safetensors", dir: func(t *testing.T) string { return writeModel(t, wordPieceJSON(t), []byte{1, 2}, "") }, target: ErrModel},
		{name: "header length too big", dir: func(t *testing.T) string { return writeModel(t, wordPieceJSON(t), badLen, "") }, target: ErrModel},
		{name: "data shorter than shape", dir: func(t *testing.T) string { return writeModel(t, wordPieceJSON(t), truncated, "") }, target: ErrModel},
		{name: "vocab beyond rows", dir: func(t *testing.T) string { return writeModel(t, wordPieceJSON(t), tooFewRows, "") }, target: ErrModel},
		{name: "integer embeddings", dir: func(t *testing.T) string { return writeModel(t, wordPieceJSON(t), intEmb, "") }, target: ErrUnsupported},
		{name: "bad config", dir: func(t *testing.T) string { return writeModel(t, wordPieceJSON(t), good, "{") }, target: ErrModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadModel2Vec(tt.dir(t))
			if !errors.Is(err, tt.target) {
				t.Fatalf("LoadModel2Vec error = %v, want %v", err, tt.target)
			}
		})
	}
}

func TestHalfToFloat(t *testing.T) {
	tests := []struct {
		name string
		in   uint16
		want float32
	}{
		{name: "one", in: 0x3C00, want: 1},
		{name: "minus two", in: 0xC000, want: -2},
		{name: "half", in: 0x3800, want: 0.5},
		{name: "max", in: 0x7BFF, want: 65504},
		{name: "smallest subnormal", in: 0x0001, want: float32(math.Ldexp(1, -24))},
		{name: "negative zero", in: 0x8000, want: float32(math.Copysign(0, -1))},
		{name: "infinity", in: 0x7C00, want: float32(math.Inf(1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := halfToFloat(tt.in); got != tt.want || math.Signbit(float64(got)) != math.Signbit(float64(tt.want)) {
				t.Errorf("halfToFloat(%#04x) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	if !math.IsNaN(float64(halfToFloat(0x7E00))) {
		t.Error("halfToFloat(NaN) is not NaN")
	}
}

func TestStripAccentsTable(t *testing.T) {
	if n := len(latinBaseRunes); n != 0x180-0xC0 {
		t.Fatalf("latinBase has %d runes, want %d", n, 0x180-0xC0)
	}
	if got := stripAccents("Crème Brûlée Ångström Łódź Æsir naïve e\u0301"); got != "Creme Brulee Angstrom Łodz Æsir naive e" {
		t.Fatalf("stripAccents = %q", got)
	}
}
