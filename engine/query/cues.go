package query

import "github.com/capdex/capdex/registry"

// Cue tables of the rules normaliser. Each phrase is matched like a lexicon member: Latin
// words by stem (so "changing" meets "change"), CJK by character. They are general
// language, never phrases lifted from an evaluation set.

// cue names (entry values of kind kCue).
const (
	cueNeg       = "neg"       // negation: forbids the verb right after it
	cueNegBare   = "neg_bare"  // "不": negation only at a clause start or after 先/也/就/暂时
	cueBie       = "neg_bie"   // "别": negation unless part of a word (特别, 区别, 识别 …)
	cueNegStart  = "neg_start" // "never", "no": negation only at a clause start or after "with"
	cueReadFirst = "read_first"
	cueWhy       = "why"     // asks for a cause: intent diagnose
	cueSuspect   = "suspect" // reports a suspected or failing state: intent diagnose
	cueHowTo     = "howto"   // asks how to do something or for steps: intent explain
	cueDryRun    = "dry_run"
	cueReadOnly  = "read_only"
	cueConfirm   = "confirm_first"
	cueOffline   = "no_network"
	cueBrowse    = "browse"     // a browse request by itself
	cueBrowseQ   = "browse_q"   // a browse request when a generic noun (能力, tools) is near
	cueGeneric   = "generic"    // tools, capabilities, 能力, 工具 …
	cueOutcome   = "outcome"    // the desired result follows
	cueRequest   = "request"    // 帮我, please: an explicit request
	cueQuestion  = "question"   // how to, 怎么: asking about, not asking for
	cueWithin    = "within"     // a scope follows
	cueCoord     = "coord"      // or, 或: coordinates verbs under one negation
	cueStop      = "scope_stop" // but, 而是: ends a negation scope
	cueFirst     = "first"      // "first" after a read verb: read first
	cueXian      = "xian"       // "先" before a read verb: read first
	cueAfter     = "after"      // after, since: the next verb is a past event
	cueEventTail = "event_tail" // 后, 之后, 完: the verb before is a past event
	cueFiller    = "filler"     // skipped between a negation and its verb
	cueBefore    = "before"     // "before" + a write verb: read first
	cueTime      = "time"       // a time expression: says when, not what (vagueness test)
	cueVoid      = "void"       // a pronoun or indefinite standing for an unnamed object
	cueHave      = "have"       // 有哪些, "do I have": asks which things there are, a list
	cueSetUp     = "set_up"     // 开个, 设个, 约个, 建个: a light verb and a measure word, "set up a …"
)

// cueSet is a set of cue names, one bit per name: an entry's cue (entry.cue) and the cues
// a query holds (analysis.cueMask) are sets, so that asking for a cue costs a bit test.
type cueSet uint64

// The bit of each cue name (cueBits maps the names to them).
const (
	csNeg cueSet = 1 << iota
	csNegBare
	csBie
	csNegStart
	csReadFirst
	csWhy
	csSuspect
	csHowTo
	csDryRun
	csReadOnly
	csConfirm
	csOffline
	csBrowse
	csBrowseQ
	csGeneric
	csOutcome
	csRequest
	csQuestion
	csWithin
	csCoord
	csStop
	csFirst
	csXian
	csAfter
	csEventTail
	csFiller
	csBefore
	csTime
	csVoid
	csHave
	csSetUp
)

// cueBits maps every cue name to its bit.
var cueBits = map[string]cueSet{
	cueNeg: csNeg, cueNegBare: csNegBare, cueBie: csBie, cueNegStart: csNegStart,
	cueReadFirst: csReadFirst, cueWhy: csWhy, cueSuspect: csSuspect, cueHowTo: csHowTo,
	cueDryRun: csDryRun, cueReadOnly: csReadOnly, cueConfirm: csConfirm, cueOffline: csOffline,
	cueBrowse: csBrowse, cueBrowseQ: csBrowseQ, cueGeneric: csGeneric, cueOutcome: csOutcome,
	cueRequest: csRequest, cueQuestion: csQuestion, cueWithin: csWithin, cueCoord: csCoord,
	cueStop: csStop, cueFirst: csFirst, cueXian: csXian, cueAfter: csAfter,
	cueEventTail: csEventTail, cueFiller: csFiller, cueBefore: csBefore, cueTime: csTime,
	cueVoid: csVoid, cueHave: csHave, cueSetUp: csSetUp,
}

var cueTable = map[string][]string{
	cueNeg: {
		"不要", "不用", "不必", "勿", "禁止", "不许", "不准", "不想", "无需", "不需要", "避免", "先别",
		"先不要", "暂时不要", "暂时别", "暂不", "千万别", "千万不要", "而不是", "不应该", "不该", "别急着",
		"不急着", "先不", "请勿", "切勿", "不得",
		"dont", "do not", "without", "avoid", "no need to", "instead of", "rather than",
		"should not", "shouldnt", "must not", "mustnt", "not yet", "please not",
	},
	cueNegBare:  {"不"},
	cueNegStart: {"never", "no"},
	cueBie:      {"别"},
	cueReadFirst: {
		"先检查", "先看", "先看看", "先查", "先查看", "先诊断", "先排查", "先确认", "先分析", "先了解",
		"先找原因", "先搞清楚", "先弄清楚", "先定位", "查原因", "找原因", "检查原因", "排查原因", "定位原因",
		"check first", "diagnose first", "inspect first", "investigate first", "look first",
		"first check", "first diagnose", "first inspect", "find out why", "figure out why",
		"find the cause", "root cause", "before changing", "before updating", "before making changes",
		"before you change", "before doing anything", "before touching",
	},
	cueWhy: {"原因", "为什么", "为啥", "怎么回事", "why", "cause", "reason"},
	cueSuspect: {
		"好像", "似乎", "貌似", "看起来", "不对劲", "不正常", "出问题", "有问题", "坏了", "报错", "出错",
		"不上", "失败", "不了", "不成功", "不起来", "连不上", "用不了", "seems", "seem to", "looks like",
		"appears to", "is broken", "not working", "doesnt work", "does not work", "keeps failing",
		"keeps crashing", "fails to", "failed to", "unable to", "is off", "wrong",
		"有点问题", "有些问题", "出了点问题", "有毛病", "不太对", "不太正常", "怪怪的", "异常",
		"something is wrong", "acting up", "acting weird", "misbehaving", "having trouble", "has issues",
	},
	cueHowTo: {
		"how to", "how do i", "how can i", "how should i", "walk me through", "step by step",
		"steps to", "the steps", "guide me", "show me how", "怎么做", "如何", "怎么办", "怎么弄", "怎么修",
		"怎么解决", "步骤", "教我", "指南", "教程", "排查步骤", "操作步骤",
	},
	cueDryRun: {
		"dry run", "dryrun", "试运行", "只看不改", "演练", "模拟运行", "模拟执行", "预演", "simulate",
		"simulation", "what would happen", "不实际执行", "先预览", "preview the changes", "preview changes",
		"plan only", "不要真的执行", "不真正执行", "空跑",
	},
	cueReadOnly: {
		"只读", "只看不改", "只查看", "只看看", "read only", "readonly", "dont change anything",
		"do not change anything", "without changing anything", "no changes", "不要改动", "不做任何修改",
		"不修改任何", "不要改任何", "不做修改", "别改任何", "dont modify anything", "do not modify anything",
	},
	cueConfirm: {
		"先问我", "问我一下", "征得我同意", "需要我确认", "确认后再", "经我确认", "ask me first",
		"ask me before", "confirm with me", "check with me first", "ask before",
	},
	cueOffline: {"离线", "不联网", "断网", "offline", "no network", "without internet", "no internet", "without network"},
	cueBrowse: {
		"有什么能力", "有什么工具", "有什么功能", "哪些能力", "哪些工具", "哪些功能", "哪些操作", "能做什么",
		"能干什么", "可以做什么", "可以干什么", "都能做", "会做什么", "有啥能力", "有啥工具", "相关能力",
		"相关工具", "相关功能", "相关操作", "所有能力", "全部能力", "所有工具", "全部工具", "能力列表",
		"工具列表", "功能列表", "能力清单", "工具清单", "what can you do", "what can i do", "what can it do",
		"what tools", "which tools", "what capabilities", "which capabilities", "what actions",
		"which actions", "what commands", "available tools", "available capabilities",
		"available actions", "tools for", "capabilities for", "tools related to",
		"capabilities related to", "what tools do you have", "what do you have for",
	},
	cueBrowseQ: {"有哪些", "有什么", "有啥", "都有什么", "列出", "列一下", "列举", "list", "show", "what", "which", "browse"},
	cueGeneric: {
		"能力", "工具", "功能", "操作", "技能", "接口", "命令", "动作", "tools", "capabilities", "actions",
		"commands", "skills", "functions", "features", "operations", "abilities",
	},
	cueOutcome: {
		"so that", "so i can", "so it", "in order to", "to make sure", "to ensure", "让", "使", "使得",
		"以便", "确保", "希望", "目的是", "为了",
	},
	cueRequest: {
		"帮我", "请", "给我", "替我", "我要", "我想", "我需要", "麻烦", "帮忙", "把", "please", "pls",
		"i want to", "i need to", "id like to", "i would like to", "can you", "could you", "help me",
		"go ahead", "lets",
	},
	cueQuestion: {
		"how to", "how do", "how can", "how should", "should i", "怎么", "如何", "怎样", "是否", "要不要",
		"该不该", "需不需要", "what happens if", "为什么", "能否",
	},
	cueWithin: {"within", "inside", "under"},
	cueCoord:  {"or", "nor", "或", "或者", "也不要", "也别", "也不", "还是"},
	cueStop:   {"but", "instead", "only", "rather", "而是", "但", "但是", "只", "只是", "然后", "just check", "and then"},
	cueTime: {
		"today", "tomorrow", "yesterday", "tonight", "now", "later", "soon", "morning", "afternoon",
		"evening", "night", "day", "days", "week", "weeks", "month", "months", "year", "next", "last",
		"this week", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
		"今天", "明天", "昨天", "后天", "前天", "今晚", "明晚", "下周", "上周", "本周", "这周", "下个月",
		"上个月", "本月", "这个月", "早上", "上午", "中午", "下午", "晚上", "现在", "马上", "周末",
	},
	// cueHave asks which things of a kind there are ("我下周有哪些会", "what meetings do I
	// have"): with no other verb it asks for a list. English needs "what"/"which" before it.
	cueHave: {
		"有哪些", "有什么", "有啥", "都有什么", "都有哪些", "do i have", "do we have", "are there",
		"are running", "is running",
	},
	// cueSetUp is a light verb with a measure word before its object ("开个会", "设个提醒",
	// "约个时间", "建个群"): the request sets the object up, and the word after it is the
	// object, not a verb (提醒 there is "a reminder").
	cueSetUp: {"开个", "开一个", "设个", "设一个", "约个", "约一个", "建个", "建一个"},
	cueVoid: {
		"it", "this", "that", "them", "something", "anything", "everything", "stuff", "things", "one",
		"它", "这个", "那个", "东西", "一下", "下", "点", "些", "一些",
	},
	cueFirst: {"first"},
	cueXian:  {"先"},
	cueAfter: {
		"after", "since", "already", "recently", "已经", "刚", "刚刚", "之前", "不能", "无法", "没法", "没办法",
		"cant", "cannot", "can not", "wont", "doesnt", "does not", "didnt", "did not", "fails to",
		"failed to", "unable to", "not able to", "keeps", "still",
	},
	cueEventTail: {"后", "之后", "以后", "完", "过", "不了", "失败", "不成功", "不起来", "不上"},
	cueFiller: {
		"直接", "马上", "立即", "立刻", "急着", "着急", "先", "去", "再", "自动", "随便", "轻易", "擅自", "帮我",
		"给我", "进行", "就", "贸然", "盲目", "急于", "忙着", "一下", "要", "想", "把", "它", "这个", "那个",
		"it", "this", "that", "them", "just", "yet", "directly", "immediately", "right", "away", "now",
		"go", "ahead", "to", "want", "need", "try", "please", "ever", "any", "the", "a", "blindly",
		"automatically", "simply", "even", "yourself", "me", "you", "i", "be", "we", "accidentally",
	},
}

// bieCompounds are characters that, before 别, make it part of a word rather than "don't".
const bieBefore = "特区类识级分告个差性辨鉴派组"

// bieAfter are characters that, after 别, make it a word ("别人", "别的", "别名").
const bieAfter = "人的名处称墅致扭"

// nounSuffixes make an English word a noun even when its concept is a verb ("payment",
// "confirmation", "deployment").
var nounSuffixes = []string{"ment", "tion", "sion", "ance", "ence", "ness", "ity", "ings"}

// determiners before an English word make it a noun ("the refund", "a review", "my booking").
var determiners = []string{
	"the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "that", "these",
	"those", "each", "every", "some", "any", "no", "another",
}

// statePrefix are the characters that, right before a verb, make it a state rather than
// a request: 待 (awaiting: 待合并的 PR), 未 (not yet: 未支付), 已 (already: 已删除).
const statePrefix = "待未已"

// bareNegAfter are the characters after which a bare 不 negates a request ("先不更新").
const bareNegAfter = "先也就并暂还"

// verbConcepts are the concept names of index/text's lexicon that are actions a user can
// ask for (intents); readConcepts are the ones that only read or look. Concepts of the
// registry's own intent values are verbs too.
var verbConcepts = []string{
	"create", "delete", "update", "edit", "rename", "move", "migrate", "copy", "replace", "list",
	"view", "get", "read", "search", "filter", "sort", "compare", "select", "merge", "split",
	"archive", "save", "undo", "restore", "backup", "reset", "clean", "submit", "confirm", "fill",
	"apply", "diagnose", "repair", "debug", "rollback", "install", "uninstall", "reinstall",
	"configure", "enable", "disable", "open", "close", "start", "stop", "restart", "run", "pause",
	"continue", "optimize", "test", "lint", "build", "deploy", "publish", "monitor", "record",
	"track", "sync", "connect", "disconnect", "lock", "unlock", "block", "hide", "pin", "encrypt",
	"decrypt", "compress", "decompress", "convert", "export", "import", "upload", "download",
	"print", "scan", "identify", "parse", "analyze", "calculate", "count", "predict", "recommend",
	"plan", "classify", "generate", "write", "translate", "summarize", "explain", "ask", "reply",
	"send", "receive", "notify", "remind", "share", "forward", "invite", "join", "assign",
	"approve", "review", "audit", "reject", "verify", "authenticate", "login", "logout",
	"register", "subscribe", "unsubscribe", "follow", "like", "favorite", "comment", "rating",
	"vote", "renew", "reschedule", "draw", "design", "resize", "play", "skip", "listen",
	"watch_video", "book", "cancel", "pay", "refund", "transfer", "shopping", "sell", "donate",
	"recharge", "navigation", "learn", "checkin", "checkout", "ocr",
}

var readConcepts = append(registry.ReadIntents(),
	// concepts that look, choose or produce content without changing anything outside the
	// answer; beyond the registry's read intents because they are concept names of the
	// request, not intents a capability declares
	"filter", "sort", "select", "debug", "lint", "scan", "identify", "parse", "count",
	"predict", "plan", "classify", "ask", "review", "draw", "design", "play", "listen",
	"watch_video", "navigation", "learn", "ocr", "generate", "write",
)

// metaVerbs say what to do with a tool rather than what the tool does: "run X" is not a
// request for a write.
var metaVerbs = []string{"run", "open", "start", "continue"}

// relatives maps a forbidden verb concept to the close relatives it also forbids.
var relatives = map[string][]string{
	"reinstall": {"update", "install"},
	"update":    {"upgrade"},
	"install":   {"reinstall"},
	"uninstall": {"delete"},
	"delete":    {"remove"},
	"restart":   {"reboot"},
	"edit":      {"modify"},
}

// genericNouns are the stems of the English words for "capability".
var genericNouns = []string{"tool", "capabl", "action", "command", "skill", "function", "featur", "oper", "abil"}

// browseNouns are the English plurals that make "list"/"what"/"which" a browse request
// ("list the tools"); "features" or "skills" are too common in ordinary requests.
var browseNouns = []string{"tools", "capabilities", "actions", "commands"}

// wishNeg are negation cues that, with a clause ending in 了, say "no longer" rather than
// "don't" ("我不需要它自动购买了").
var wishNeg = []string{"不需要", "不想", "不用", "无需"}

// genericWords are left out of a browse scope's keys (they say "capability", not which).
var genericWords = []string{
	"tool", "capabl", "capabil", "action", "command", "skill", "function", "featur", "oper",
	"abil", "list", "show", "what", "which", "avail", "relat", "browse", "do", "can", "all",
}
