package text

import "testing"

func TestVocabNumbersForGood(t *testing.T) {
	v := NewVocab()
	buf := []byte("alpha beta")
	a := v.Number(string(buf[:5]))
	b := v.Number("beta")
	if a != 0 || b != 1 || v.Number("alpha") != 0 || v.Len() != 2 {
		t.Fatalf("numbers: alpha %d, beta %d, len %d", a, b, v.Len())
	}
	copy(buf, "gamma")
	if v.Term(0) != "alpha" || v.Term(1) != "beta" {
		t.Fatalf("terms: %q %q", v.Term(0), v.Term(1))
	}
}

func TestVocabOutgrown(t *testing.T) {
	v := NewVocab()
	for i := range 1040 {
		v.Number(string(rune('a'+i%26)) + string(rune(0x4e00+i)))
	}
	if v.Outgrown(3) == false {
		t.Fatalf("1040 terms, 3 live (1030 allowed): want outgrown")
	}
	if v.Outgrown(10) {
		t.Fatalf("1040 terms, 10 live (1044 allowed): want not outgrown")
	}
}
