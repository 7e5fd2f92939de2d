package main

import (
	"errors"
	"strings"
	"testing"
)

const sample = `# CC-CEDICT sample
刪除 删除 [shan1 chu2] /to delete/to cancel/
刪掉 删掉 [shan1 diao4] /to delete/
刪 删 [shan1] /to delete/
中國 中国 [Zhong1 guo2] /China/
論文 论文 [lun4 wen2] /paper/treatise/thesis/CL:篇[pian1]/to discuss a paper or thesis (old)/
撤消 撤消 [che4 xiao1] /variant of 撤銷|撤销[che4 xiao1]/
秒錶 秒表 [miao3 biao3] /stopwatch/
秒表 秒表 [miao3 biao3] /(Tw) stopwatch (variant)/
一石二鳥 一石二鸟 [yi1 shi2 er4 niao3] /lit. to kill two birds with one stone (idiom); fig. to achieve two aims at once/
還原 还原 [huan2 yuan2] /to restore to the original state/to reconstruct (an event)/reduction (chemistry)/
3C 3C [san1 C] /abbr. for computers/
`

func TestGenerate(t *testing.T) {
	var b strings.Builder
	if err := Generate(strings.NewReader(sample), &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "# capdex cross-language bridge") || !strings.Contains(out, "CC BY-SA 4.0") {
		t.Fatalf("header lacks the licence:\n%s", out)
	}
	var body []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	want := []string{
		"删除 delete cancel", // short glosses, "to" dropped
		"删掉 delete",
		// 删 (one character), 中国 (a proper noun), 撤消 (only a variant reference),
		// 一石二鸟 (an explanation, not a translation) and 3C (not Han) are left out
		"论文 paper treatise thesis", // CL: and the long gloss dropped
		"秒表 stopwatch",             // two entries merged, the parenthesised (Tw) dropped
		"还原 reconstruct reduction", // the 3-word gloss dropped, the aside "(an event)" too
	}
	if strings.Join(body, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(body, "\n"), strings.Join(want, "\n"))
	}
}

func TestGenerateRejectsBadLines(t *testing.T) {
	for _, in := range []string{"删除 [shan1 chu2] /to delete/", "刪除 删除 shan1 /to delete/", "刪除 删除 [shan1 chu2] to delete"} {
		err := Generate(strings.NewReader("# x\n"+in+"\n"), &strings.Builder{})
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: err = %v, want ErrFormat naming line 2", in, err)
		}
	}
}
