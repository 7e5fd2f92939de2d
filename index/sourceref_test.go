package index

import (
	"testing"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

func TestSourceSpans(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"能把加餐里的苹果改成香蕉吗，时间是邮件里提到的那个。", []string{"邮件"}},
		{"小明发给我的QQ消息里提到的时间，我想删除那天的瑜伽记录。", []string{"QQ消息"}},
		{"下周六我想去Tom发给我的短信里提到的地点", []string{"短信"}},
		{"下周六去Tom短信里提到的地点", []string{"Tom短信"}},
		{"查一下记事本里提到的那本书", []string{"记事本"}},              // a CC-CEDICT word of three characters
		{"我想删除邮件里提到的那个人的联系信息", []string{"邮件"}},          // the verb before it is not the source
		{"地点是小李微信中提到的，时间是邮件上提到的", []string{"微信", "邮件"}}, // two references, other locatives
		{"会上他提到了预算", nil}, // no locative before the marker: not a source reference
		{"提到", nil},       // nothing before it
		{"the time mentioned in the email", nil},
		{"删除邮件", nil},
	} {
		var got []string
		for _, sp := range sourceSpans(c.q) {
			got = append(got, c.q[sp[0]:sp[1]])
		}
		if len(got) != len(c.want) {
			t.Errorf("sourceSpans(%q) = %q, want %q", c.q, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("sourceSpans(%q) = %q, want %q", c.q, got, c.want)
			}
		}
	}
}

// TestSourceNounWeighsLess: "改成邮件里提到的时间" takes a time from an email; the task is the
// diet record. Over the whole text the mail tool (邮件 twice in its summary, and the email
// concept) would win; with the source noun weighed sourceWeight the diet tool is first.
func TestSourceNounWeighsLess(t *testing.T) {
	caps := []*registry.Capability{
		action("health.update_diet_record", "updateDietRecord", "根据条件调整饮食记录"),
		action("mail.search_mail", "searchMail", "根据邮件关键词搜索邮件"),
		action("mail.send_mail", "sendMail", "给指定联系人发送邮件"),
		action("sport.view_records", "viewExerciseRecords", "查看运动记录"),
		action("phone.delete_records", "deleteCallRecords", "删除通话记录"),
	}
	g := buildCaps(t, 1, caps, cheap)
	q := "把记录改成邮件里提到的时间"
	hits := g.retrieveLexical(&Query{Text: q}, nil, 10)
	if got := ids(g, hits); len(got) == 0 || got[0] != "health.update_diet_record" {
		t.Fatalf("lexical ranking of %q: %v, want the diet record first", q, got)
	}
	// the engine's form of the query (terms and concepts analysed beforehand) ranks the same
	terms, concepts := text.AppendTermsConceptIDs(nil, nil, q)
	again := g.retrieveLexical(&Query{Text: q, Terms: terms, ConceptIDs: concepts}, nil, 10)
	if a, b := ids(g, hits), ids(g, again); len(a) != len(b) || a[0] != b[0] {
		t.Fatalf("analysed query ranks %v, text alone %v", b, a)
	}
	// without a source reference the mail word keeps its full weight: the check above is
	// not won by the diet words alone
	plain := "把记录改成邮件的时间"
	if got := ids(g, g.retrieveLexical(&Query{Text: plain}, nil, 10)); len(got) == 0 || got[0] != "mail.search_mail" {
		t.Fatalf("lexical ranking of %q: %v, want the mail tool first (the fixture no longer tests the source weight)", plain, got)
	}
}
