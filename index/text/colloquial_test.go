package text

import (
	"slices"
	"testing"
)

// TestColloquialVerbs checks that the everyday Chinese (and English) forms of the action
// verbs name the same concept as the written form a catalogue uses: a request that says
// 移出 or 调整 must meet a tool described with 删除 or 修改 (issue 18: the wrong action on
// the right object). The phrases are made up, not taken from an evaluation set.
func TestColloquialVerbs(t *testing.T) {
	tests := []struct {
		colloquial, written, verb string
	}{
		{"把这张照片加到相册", "添加照片到相册", "create"},
		{"把他移出群聊", "删除群成员", "delete"},
		{"get rid of old files", "delete old files", "delete"},
		{"调整会议时间", "修改会议时间", "edit"},
		{"把时间改成下午三点", "修改时间", "edit"},
		{"adjust the volume", "change the volume", "edit"},
		{"瞅瞅今天的天气", "查看今天的天气", "view"},
		{"看一眼日程", "查看日程", "view"},
		{"翻开第一页", "打开第一页", "open"},
		{"把车门关上", "关闭车门", "close"},
		{"停掉自动续费", "停止自动续费", "stop"},
		{"撤掉那笔订单", "取消订单", "cancel"},
		{"把酒店退掉", "取消酒店", "cancel"},
		{"撤回那条消息", "撤销消息", "undo"},
		{"寄一个包裹给他", "发送包裹", "send"},
		{"入手一台相机", "购买相机", "shopping"},
		{"交费", "缴费", "pay"},
		{"记一下今天的支出", "记录今天的支出", "record"},
	}
	for _, tt := range tests {
		t.Run(tt.colloquial, func(t *testing.T) {
			for _, s := range []string{tt.colloquial, tt.written} {
				if got := ConceptsIn(s); !slices.Contains(got, tt.verb) {
					t.Errorf("ConceptsIn(%q) = %q, want it to hold %q", s, got, tt.verb)
				}
			}
		})
	}
}

// TestColloquialVerbsLeftOut pins the forms left out because they do not always mean the
// group's verb: 加个 is "add a" in 加个联系人 but "apply" in 加个滤镜, and as a create member it
// cost the cross-language set (bench/report/verb18.md).
func TestColloquialVerbsLeftOut(t *testing.T) {
	if got := ConceptsIn("给照片加个滤镜"); slices.Contains(got, "create") {
		t.Errorf("ConceptsIn(%q) = %q, want no create", "给照片加个滤镜", got)
	}
}
