// Package testcat generates synthetic capability catalogues for tests and benchmarks: packs of
// varied depth holding actions and recipes, with Chinese and English titles, summaries and
// aliases, intents, entities, symptoms, argument schemas, tenant and scope restrictions, and a
// few offline, deprecated or disabled entries so the pre-filters have something to do.
//
// Module and product names are pronounceable pseudo-words from a vocabulary that grows with
// the square root of the catalogue (Heaps' law), so a large catalogue is not just the small
// one repeated. Every catalogue passes registry.Lint. The output depends only on (n, seed):
// the same arguments give the same catalogue.
package testcat

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/capdex/capdex/registry"
)

type word struct{ en, zh string }

type verb struct {
	word
	intent   string
	se       registry.SideEffect
	risk     registry.RiskLevel
	synonyms []string // extra English phrasings for aliases
}

var verbs = []verb{
	{word{"create", "创建"}, "create", registry.SideEffectWriteShared, registry.RiskMedium, []string{"new", "add"}},
	{word{"delete", "删除"}, "delete", registry.SideEffectImpact, registry.RiskHigh, []string{"remove", "drop"}},
	{word{"update", "更新"}, "update", registry.SideEffectWriteShared, registry.RiskMedium, []string{"modify", "change"}},
	{word{"list", "列出"}, "list", registry.SideEffectRead, registry.RiskLow, []string{"show all", "enumerate"}},
	{word{"get", "查询"}, "query", registry.SideEffectRead, registry.RiskLow, []string{"fetch", "look up"}},
	{word{"search", "搜索"}, "search", registry.SideEffectRead, registry.RiskLow, []string{"find", "lookup"}},
	{word{"export", "导出"}, "export", registry.SideEffectRead, registry.RiskLow, []string{"download", "dump"}},
	{word{"import", "导入"}, "import", registry.SideEffectWriteShared, registry.RiskMedium, []string{"upload", "load"}},
	{word{"diagnose", "诊断"}, "diagnose", registry.SideEffectRead, registry.RiskLow, []string{"troubleshoot", "inspect"}},
	{word{"repair", "修复"}, "repair", registry.SideEffectWriteLocal, registry.RiskMedium, []string{"fix", "heal"}},
	{word{"sync", "同步"}, "sync", registry.SideEffectWriteShared, registry.RiskMedium, []string{"synchronize", "refresh"}},
	{word{"approve", "审批"}, "approve", registry.SideEffectWriteShared, registry.RiskMedium, []string{"accept", "sign off"}},
	{word{"cancel", "取消"}, "cancel", registry.SideEffectWriteShared, registry.RiskMedium, []string{"abort", "revoke"}},
	{word{"send", "发送"}, "send", registry.SideEffectImpact, registry.RiskHigh, []string{"notify", "deliver"}},
	{word{"archive", "归档"}, "archive", registry.SideEffectWriteShared, registry.RiskLow, []string{"store away", "shelve"}},
	{word{"restore", "恢复"}, "restore", registry.SideEffectWriteShared, registry.RiskMedium, []string{"recover", "bring back"}},
	{word{"verify", "校验"}, "verify", registry.SideEffectRead, registry.RiskLow, []string{"validate", "check"}},
	{word{"monitor", "监控"}, "monitor", registry.SideEffectRead, registry.RiskLow, []string{"watch", "track"}},
	{word{"rollback", "回滚"}, "rollback", registry.SideEffectWriteLocal, registry.RiskHigh, []string{"revert", "undo"}},
	{word{"summarize", "汇总"}, "summarize", registry.SideEffectRead, registry.RiskLow, []string{"report on", "digest"}},
}

var objects = []word{
	{"invoice", "发票"}, {"order", "订单"}, {"schedule", "日程"}, {"meeting", "会议"},
	{"ticket", "工单"}, {"user", "用户"}, {"account", "账户"}, {"report", "报表"},
	{"file", "文件"}, {"repository", "仓库"}, {"container", "容器"}, {"database", "数据库"},
	{"backup", "备份"}, {"certificate", "证书"}, {"payment", "支付"}, {"refund", "退款"},
	{"contract", "合同"}, {"customer", "客户"}, {"product", "商品"}, {"inventory", "库存"},
	{"shipment", "物流"}, {"flight", "航班"}, {"hotel", "酒店"}, {"train_ticket", "火车票"},
	{"expense", "报销"}, {"message", "消息"}, {"email", "邮件"}, {"notification", "通知"},
	{"log", "日志"}, {"metric", "指标"}, {"alert", "告警"}, {"deployment", "部署"},
	{"pipeline", "流水线"}, {"branch", "分支"}, {"pull_request", "合并请求"}, {"package", "软件包"},
	{"cluster", "集群"}, {"node", "节点"}, {"secret", "密钥"}, {"permission", "权限"},
	{"role", "角色"}, {"document", "文档"}, {"knowledge_base", "知识库"}, {"dashboard", "仪表盘"},
	{"task", "任务"}, {"workflow", "工作流"}, {"device", "设备"}, {"sensor", "传感器"},
	{"budget", "预算"}, {"salary", "工资"}, {"leave_request", "请假申请"}, {"vendor", "供应商"},
	{"coupon", "优惠券"}, {"subscription", "订阅"}, {"webhook", "回调"}, {"dns_record", "域名解析"},
}

type domain struct {
	word
	scenarios []string
	os        []string // supported_os of its actions; nil = any
	systems   []word   // subsystem names used for packs
}

var domains = []domain{
	{word{"maintenance", "运维"}, []string{"cli_upgrade", "incident"}, []string{"linux", "macos"},
		[]word{{"codex", "Codex"}, {"npm", "npm"}, {"python", "Python"}, {"docker", "Docker"}, {"nginx", "Nginx"}, {"systemd", "systemd"}, {"brew", "Homebrew"}, {"kernel", "内核"}}},
	{word{"devtools", "开发工具"}, []string{"code_review", "ci"}, nil,
		[]word{{"github", "GitHub"}, {"gitlab", "GitLab"}, {"jenkins", "Jenkins"}, {"jira", "Jira"}, {"sonar", "Sonar"}}},
	{word{"finance", "财务"}, []string{"reimbursement", "month_close"}, nil,
		[]word{{"billing", "计费"}, {"ledger", "总账"}, {"tax", "税务"}, {"treasury", "资金"}, {"audit", "审计"}}},
	{word{"travel", "差旅"}, []string{"trip_planning", "booking"}, nil,
		[]word{{"booking", "预订"}, {"itinerary", "行程"}, {"visa", "签证"}, {"rail", "铁路"}}},
	{word{"hr", "人事"}, []string{"onboarding", "payroll"}, nil,
		[]word{{"recruiting", "招聘"}, {"payroll", "薪酬"}, {"attendance", "考勤"}, {"training", "培训"}}},
	{word{"crm", "客户关系"}, []string{"sales", "support"}, nil,
		[]word{{"sales", "销售"}, {"support", "客服"}, {"marketing", "营销"}, {"loyalty", "会员"}}},
	{word{"cloud", "云平台"}, []string{"provisioning", "cost_control"}, []string{"linux"},
		[]word{{"compute", "计算"}, {"storage", "存储"}, {"network", "网络"}, {"iam", "身份"}, {"k8s", "Kubernetes"}}},
	{word{"analytics", "数据分析"}, []string{"bi", "etl"}, nil,
		[]word{{"warehouse", "数仓"}, {"etl", "ETL"}, {"bi", "BI"}, {"experiment", "实验"}}},
	{word{"messaging", "消息通知"}, []string{"broadcast", "alerting"}, nil,
		[]word{{"sms", "短信"}, {"mail", "邮件"}, {"chat", "聊天"}, {"push", "推送"}}},
	{word{"security", "安全"}, []string{"incident", "compliance"}, []string{"linux", "windows"},
		[]word{{"scanner", "扫描"}, {"vault", "保险库"}, {"firewall", "防火墙"}, {"siem", "SIEM"}}},
	{word{"commerce", "电商"}, []string{"checkout", "fulfilment"}, nil,
		[]word{{"catalog", "商品目录"}, {"cart", "购物车"}, {"warehouse", "仓储"}, {"promo", "促销"}}},
	{word{"office", "办公"}, []string{"collaboration", "calendar"}, nil,
		[]word{{"calendar", "日历"}, {"docs", "文档"}, {"drive", "网盘"}, {"approval", "审批流"}}},
}

var symptomStems = []string{"out_of_sync", "missing", "duplicated", "stale", "timeout", "permission_denied", "version_mismatch", "corrupted", "quota_exceeded", "slow"}

var capTypes = []string{"tool", "tool", "tool", "tool", "skill", "mcp", "task", "database_query", "knowledge_search", "report_generator", "notification", "workflow", "agent"}

var paramPool = []struct{ name, typ, en, zh string }{
	{"id", "string", "identifier of the %s", "%s的编号"},
	{"name", "string", "display name of the %s", "%s名称"},
	{"date", "string", "date in YYYY-MM-DD", "日期，格式 YYYY-MM-DD"},
	{"limit", "integer", "maximum number of results", "返回结果的最大数量"},
	{"dry_run", "boolean", "only show what would change", "只预览变更，不真正执行"},
	{"owner", "string", "owner of the %s", "%s负责人"},
	{"status", "string", "status filter for the %s", "%s状态过滤"},
	{"reason", "string", "why the change is made", "变更原因"},
	{"region", "string", "region code such as cn or us", "地区代码，如 cn 或 us"},
	{"amount", "number", "amount in the account currency", "金额（账户币种）"},
	{"query", "string", "free text to match the %s", "用于匹配%s的关键词"},
	{"tags", "array", "labels to attach", "要附加的标签"},
}

// Text templates: %[1]s is the verb, %[2]s the object, %[3]s the system, %[4]s the domain.
var (
	enTitles = []string{"%[1]s %[2]s in %[3]s", "%[3]s: %[1]s %[2]s", "%[1]s a %[2]s", "%[1]s %[3]s %[2]s records"}
	zhTitles = []string{"%[1]s%[2]s（%[3]s）", "%[3]s%[2]s%[1]s", "%[1]s%[3]s中的%[2]s", "%[2]s%[1]s"}
	enSums   = []string{
		"%[1]s a %[2]s in %[3]s and report what changed.",
		"Lets an agent %[1]s %[2]s records stored in %[3]s.",
		"%[1]s the %[2]s through the %[3]s API and return the affected ids.",
		"Use this to %[1]s %[2]s data when working on %[4]s.",
		"Bulk %[1]s for %[2]s entries kept in %[3]s, with validation.",
		"%[1]s one %[2]s by id in %[3]s.",
		"Tool that can %[1]s a %[2]s for the %[4]s team.",
		"Safely %[1]s %[2]s objects in %[3]s; stops on conflicts.",
	}
	zhSums = []string{
		"在%[3]s中%[1]s%[2]s，并返回变更摘要。",
		"用于%[1]s%[3]s里的%[2]s记录。",
		"通过%[3]s接口%[1]s%[2]s，返回受影响的编号。",
		"%[4]s场景下%[1]s%[2]s数据。",
		"批量%[1]s%[3]s中的%[2]s，带校验。",
		"按编号%[1]s一条%[2]s。",
		"帮助%[4]s团队%[1]s%[2]s的工具。",
		"安全地%[1]s%[2]s，遇到冲突时停止。",
	}
	enExtras = []string{"Supports pagination.", "Needs an API token.", "Results are cached for five minutes.",
		"Filter by date range.", "Writes an audit event.", "Respects the tenant quota.", "Times out after 30 seconds.",
		"Returns at most 100 items.", "Retries transient errors.", "Owner approval may be required.",
		"Handles unicode names.", "Works offline from a local mirror."}
	zhExtras = []string{"支持分页。", "需要接口令牌。", "结果缓存五分钟。", "可按日期范围筛选。", "会写入审计日志。",
		"受租户配额限制。", "超过三十秒会超时。", "最多返回一百条。", "遇到临时错误会重试。", "可能需要负责人审批。"}
	enWhen = []string{"the user wants to %[1]s a %[2]s", "%[3]s %[2]s needs attention", "a %[2]s in %[3]s is wrong",
		"someone asks to %[1]s %[2]s data", "before closing a %[4]s task about %[2]s"}
	zhWhen = []string{"需要%[1]s%[2]s时", "%[3]s的%[2]s出现问题", "用户要求%[1]s%[2]s", "%[4]s流程中处理%[2]s"}
)

func (g *gen) tmpl(list []string, args ...any) string {
	return fmt.Sprintf(list[g.pick(len(list))], args...)
}

var tenants = []string{"acme", "globex", "initech"}
var scopes = []string{"finance", "ops", "hr", "sales"}

type gen struct {
	r     *rand.Rand
	out   []*registry.Capability
	ids   map[string]bool
	n     int
	roots map[string]bool
	pool  []string // module names, a vocabulary that grows with the catalogue
}

var syllables = []string{"ka", "zen", "tri", "lo", "mar", "vex", "qui", "dor", "pel", "sa", "nu", "rix",
	"ta", "bo", "lin", "gor", "fa", "mi", "ser", "ul", "pra", "ko", "den", "vi", "sto", "ga", "rel", "om"}

// word makes a pronounceable pseudo-word: product and module names of a real registry.
func (g *gen) word() string {
	n := 2 + g.pick(2)
	var b strings.Builder
	for range n {
		b.WriteString(syllables[g.pick(len(syllables))])
	}
	return b.String()
}

// module picks a module name, Zipf-like: a few are common, most are rare.
func (g *gen) module() string { return g.pool[g.pick(g.pick(len(g.pool))+1)] }

// GenerateCatalog returns exactly n capabilities (packs, actions and recipes) generated from
// seed. Packs come before their children in the returned slice; ids are unique and valid.
// Roughly a third of the titles and summaries are Chinese; about 2% of the actions are
// deprecated and 1% offline; a few packs are disabled or limited to one tenant or scope.
func GenerateCatalog(n int, seed int64) []*registry.Capability {
	if n <= 0 {
		return nil
	}
	g := &gen{r: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)), ids: map[string]bool{}, n: n, roots: map[string]bool{}}
	// Heaps' law: the vocabulary of module names grows like the square root of the catalogue
	g.pool = make([]string, 100+int(20*math.Sqrt(float64(n))))
	for i := range g.pool {
		g.pool[i] = g.word()
	}
	for len(g.out) < n {
		g.addPack()
	}
	return g.out
}

func (g *gen) full() bool { return len(g.out) >= g.n }

func (g *gen) add(c *registry.Capability) {
	g.ids[c.ID] = true
	g.out = append(g.out, c)
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) unique(id string) string {
	if !g.ids[id] {
		return id
	}
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s%d", id, i)
		if !g.ids[c] {
			return c
		}
	}
}

func enabledPtr(b bool) *bool { return &b }

// addPack adds a pack at depth 1..4 under a domain root and fills it with actions.
func (g *gen) addPack() {
	d := domains[g.pick(len(domains))]
	if !g.roots[d.en] {
		g.roots[d.en] = true
		g.add(&registry.Capability{
			ID: d.en, Version: 1, ResourceType: registry.TypePack, Title: fmt.Sprintf("%s (%s)", strings.ToUpper(d.en[:1])+d.en[1:], d.zh),
			Summary:  fmt.Sprintf("Capabilities for %s. %s相关的能力。", d.en, d.zh),
			Guidance: fmt.Sprintf("Prefer read-only %s actions first. 先只读排查，再做变更。", d.en),
			Domain:   d.en, Owner: d.en + "-team", Status: registry.StatusActive,
			ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}, Execute: []string{"dev", "admin"}},
		})
		if g.full() {
			return
		}
	}
	parent := d.en
	depth := 1 + g.pick(3)
	var sys word
	for level := 0; level < depth; level++ {
		if level == 0 {
			sys = d.systems[g.pick(len(d.systems))]
		} else {
			sys = objects[g.pick(len(objects))]
		}
		id := parent + "." + sys.en
		if g.ids[id] && g.chance(0.5) {
			parent = id // descend into an existing pack
			continue
		}
		id = g.unique(id)
		p := &registry.Capability{
			ID: id, Version: 1, ResourceType: registry.TypePack,
			Domain: d.en, Owner: d.en + "-team", Status: registry.StatusActive,
			Tags: []string{d.en, sys.en},
		}
		if g.chance(0.35) {
			p.Title = fmt.Sprintf("%s%s工具集", sys.zh, d.zh)
			p.Summary = fmt.Sprintf("%s中与%s有关的操作和排查。", d.zh, sys.zh)
		} else {
			p.Title = fmt.Sprintf("%s %s tools", titleCase(sys.en), d.en)
			p.Summary = fmt.Sprintf("Operations and troubleshooting for %s in %s.", strings.ReplaceAll(sys.en, "_", " "), d.en)
		}
		product := g.word()
		p.Title += " · " + titleCase(product)
		p.Aliases = []string{sys.zh, strings.ReplaceAll(sys.en, "_", " ") + " " + d.en, product}
		switch x := g.r.Float64(); {
		case x < 0.03:
			p.Tenants = []string{tenants[g.pick(len(tenants))]}
		case x < 0.06:
			s := scopes[g.pick(len(scopes))]
			p.ACL = registry.ACL{Discover: []string{s}, Describe: []string{s}, Execute: []string{s}}
		case x < 0.07:
			p.Enabled = enabledPtr(false)
		case x < 0.08:
			p.ACL = registry.ACL{Deny: []string{"tenant:" + tenants[g.pick(len(tenants))]}}
		}
		g.add(p)
		if g.full() {
			return
		}
		parent = id
	}
	k := 3 + g.pick(18)
	g.addActions(d, parent, sys, k)
}

func titleCase(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, " ")
}

func (g *gen) addActions(d domain, pack string, sys word, k int) {
	for i := 0; i < k && !g.full(); i++ {
		o := objects[g.pick(len(objects))]
		v := verbs[g.pick(len(verbs))]
		id := pack + "." + o.en + "_" + v.en
		if g.ids[id] {
			continue
		}
		if g.chance(0.04) {
			g.add(g.recipe(d, pack, sys, o, v))
			continue
		}
		g.add(g.action(d, id, sys, o, v))
	}
}

func (g *gen) action(d domain, id string, sys word, o word, v verb) *registry.Capability {
	zh := g.chance(0.35)
	oen := strings.ReplaceAll(o.en, "_", " ")
	c := &registry.Capability{
		ID: id, Version: 1 + g.pick(3), ResourceType: registry.TypeAction,
		CapabilityType: capTypes[g.pick(len(capTypes))],
		Domain:         d.en, Scenarios: []string{d.scenarios[g.pick(len(d.scenarios))]},
		SupportedOS: d.os, SideEffect: v.se, RiskLevel: v.risk,
		RequiresConfirmation: v.se == registry.SideEffectImpact,
		Owner:                d.en + "-team", Status: registry.StatusActive,
		Intents:       []string{v.intent},
		Entities:      []string{o.en, sys.en},
		Tags:          []string{d.en, o.en},
		NetworkPolicy: registry.NetworkNone,
	}
	if v.risk == registry.RiskHigh {
		c.Reviewer = "security-team"
	}
	mod := g.module()
	if zh {
		c.Title = g.tmpl(zhTitles, v.zh, o.zh, sys.zh, d.zh)
		c.Summary = g.tmpl(zhSums, v.zh, o.zh, sys.zh, d.zh) + "（" + mod + " 模块）"
		if g.chance(0.6) {
			c.Summary += zhExtras[g.pick(len(zhExtras))]
		}
		c.WhenToUse = []string{g.tmpl(zhWhen, v.zh, o.zh, sys.zh, d.zh)}
		c.WhenNotToUse = []string{fmt.Sprintf("用户只想了解%s的说明文档", o.zh)}
	} else {
		c.Title = g.tmpl(enTitles, titleCase(v.en), oen, titleCase(sys.en), d.en)
		c.Summary = g.tmpl(enSums, titleCase(v.en), oen, titleCase(sys.en), d.en) + " Module: " + mod + "."
		if g.chance(0.6) {
			c.Summary += " " + enExtras[g.pick(len(enExtras))]
		}
		c.WhenToUse = []string{g.tmpl(enWhen, v.en, oen, sys.en, d.en)}
		c.WhenNotToUse = []string{fmt.Sprintf("the user only asks how %s works", oen)}
	}
	if g.chance(0.5) {
		if zh {
			c.WhenToUse = append(c.WhenToUse, g.tmpl(zhWhen, v.zh, o.zh, sys.zh, d.zh))
		} else {
			c.WhenToUse = append(c.WhenToUse, g.tmpl(enWhen, v.en, oen, sys.en, d.en))
		}
	}
	syn := v.synonyms[g.pick(len(v.synonyms))]
	c.Aliases = []string{v.zh + o.zh, syn + " " + oen}
	if g.chance(0.5) {
		c.Aliases = append(c.Aliases, mod+" "+oen+" "+v.en)
	}
	if g.chance(0.4) {
		c.Aliases = append(c.Aliases, fmt.Sprintf("%s %s %s", sys.en, oen, v.en))
	}
	if v.intent == "diagnose" || v.intent == "repair" || v.intent == "verify" || g.chance(0.15) {
		c.Symptoms = []string{o.en + "_" + symptomStems[g.pick(len(symptomStems))]}
		if g.chance(0.5) {
			c.Symptoms = append(c.Symptoms, sys.en+"_"+symptomStems[g.pick(len(symptomStems))])
		}
	}
	if g.chance(0.3) {
		c.Intents = append(c.Intents, verbs[g.pick(len(verbs))].intent)
	}
	c.ArgumentsSchema = g.schema(o, zh)
	c.OutputSchema = json.RawMessage(`{"type":"object"}`)
	c.Handler = &registry.Handler{Kind: "http", Method: "POST", URL: "{{.base_url." + d.en + "}}/" + strings.ReplaceAll(id, ".", "/")}
	c.Produces = []string{o.en + "_summary"}
	switch x := g.r.Float64(); {
	case x < 0.02:
		c.Status = registry.StatusDeprecated
	case x < 0.03:
		c.Status = registry.StatusOffline
	case x < 0.04:
		c.ACL = registry.ACL{Discover: []string{"admin"}, Describe: []string{"admin"}, Execute: []string{"admin"}}
	}
	return c
}

func (g *gen) schema(o word, zh bool) json.RawMessage {
	props := map[string]any{}
	var req []string
	np := 1 + g.pick(5)
	for i := 0; i < np; i++ {
		p := paramPool[g.pick(len(paramPool))]
		name := p.name
		if name == "id" || name == "name" {
			name = o.en + "_" + name
		}
		desc := p.en
		label := strings.ReplaceAll(o.en, "_", " ")
		if zh {
			desc, label = p.zh, o.zh
		}
		if strings.Contains(desc, "%s") {
			desc = fmt.Sprintf(desc, label)
		}
		prop := map[string]any{"type": p.typ, "description": desc}
		if p.typ == "array" {
			prop["items"] = map[string]any{"type": "string"}
		}
		props[name] = prop
		if i == 0 {
			req = append(req, name)
		}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}) // a map of plain values always marshals
	return b
}

func (g *gen) recipe(d domain, pack string, sys word, o word, v verb) *registry.Capability {
	id := g.unique(pack + "." + o.en + "_" + v.en + "_guide")
	oen := strings.ReplaceAll(o.en, "_", " ")
	return &registry.Capability{
		ID: id, Version: 1, ResourceType: registry.TypeRecipe, CapabilityType: "rule",
		Title:     fmt.Sprintf("How to %s a %s safely (%s%s指南)", v.en, oen, v.zh, o.zh),
		Summary:   fmt.Sprintf("Step-by-step guide to %s a %s in %s, with checks before and after.", v.en, oen, sys.en),
		Intents:   []string{v.intent},
		Entities:  []string{o.en, sys.en},
		WhenToUse: []string{fmt.Sprintf("before you %s a %s by hand", v.en, oen)},
		Domain:    d.en, Owner: d.en + "-team", Status: registry.StatusActive,
		Steps: []registry.RecipeStep{
			{Title: "Check the current state", Command: sys.en + " status"},
			{Title: fmt.Sprintf("%s the %s", titleCase(v.en), oen), Note: "先备份再操作"},
		},
	}
}
