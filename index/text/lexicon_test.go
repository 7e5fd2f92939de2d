package text

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
)

// allowedOverlaps lists member keys that intentionally belong to more than one group.
var allowedOverlaps = map[string][]string{
	"book": {"book", "book_reading"}, // book a flight / read a book
}

func defaultLex(tb testing.TB) *Lexicon {
	tb.Helper()
	if err := DefaultLexiconErr(); err != nil {
		tb.Fatalf("embedded concepts.txt does not parse: %v", err)
	}
	return DefaultLexicon()
}

func TestDefaultLexiconParses(t *testing.T) {
	l := defaultLex(t)
	if l.Len() < 250 {
		t.Errorf("lexicon has %d groups, want at least 250", l.Len())
	}
	if got := len(l.Names()); got != l.Len() {
		t.Errorf("Names() has %d entries, Len() = %d", got, l.Len())
	}
	t.Logf("lexicon: %d groups", l.Len())
}

func TestLexiconNoUnintendedOverlap(t *testing.T) {
	l := defaultLex(t)
	ov := l.Overlaps()
	keys := make([]string, 0, len(ov))
	for k := range ov {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want, ok := allowedOverlaps[k]
		got := slices.Sorted(slices.Values(ov[k]))
		if !ok || !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("member key %q is in groups %v; give it one group or list it in allowedOverlaps", k, got)
		}
	}
	for k := range allowedOverlaps {
		if _, ok := ov[k]; !ok {
			t.Errorf("allowedOverlaps lists %q, which is no longer shared: remove it", k)
		}
	}
}

func TestLexiconRoundTrip(t *testing.T) {
	l := defaultLex(t)
	for _, name := range l.Names() {
		members := l.Members(name)
		if len(members) == 0 {
			t.Errorf("group %q has no members", name)
			continue
		}
		if !slices.Equal(members, ConceptMembers(name)) {
			t.Errorf("ConceptMembers(%q) differs from Lexicon.Members", name)
		}
		for _, m := range members {
			if got := l.Concepts(m); !slices.Contains(got, name) {
				t.Errorf("Concepts(%q) = %v, want it to contain %q", m, got, name)
			}
			if got := l.ConceptsIn(m); !slices.Contains(got, name) {
				t.Errorf("ConceptsIn(%q) = %v, want it to contain %q", m, got, name)
			}
			if got := l.ConceptsIn("please " + strings.ToUpper(m) + " now"); !slices.Contains(got, name) {
				t.Errorf("ConceptsIn(in context %q) = %v, want it to contain %q", m, got, name)
			}
		}
	}
	if ConceptMembers("no_such_group") != nil {
		t.Error("ConceptMembers of an unknown name is not nil")
	}
}

func TestConcepts(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{name: "chinese", in: "删除", want: []string{"delete"}},
		{name: "inflected english", in: "deleting", want: []string{"delete"}},
		{name: "past tense", in: "Deleted", want: []string{"delete"}},
		{name: "upgrade", in: "upgraded", want: []string{"update"}},
		{name: "phrase", in: "sign in", want: []string{"login"}},
		{name: "phrase written as id", in: "sign_in", want: []string{"login"}},
		{name: "full-width", in: "ＤＥＬＥＴＥ", want: []string{"delete"}},
		{name: "ambiguous", in: "book", want: []string{"book", "book_reading"}},
		{name: "unknown", in: "zzzz", want: nil},
		{name: "cjk not a whole member", in: "删除日程", want: nil},
		{name: "empty", in: "  ", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Concepts(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Concepts(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestConceptsIn(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{name: "zh verb object", in: "删除日程", want: []string{"delete", "schedule"}},
		{name: "en verb object", in: "delete a schedule event", want: []string{"delete", "schedule", "event"}},
		{name: "mixed", in: "Codex 更新后仍然启动旧版本", want: []string{"update", "start", "old", "version"}},
		{name: "longest cjk match", in: "取消订阅", want: []string{"unsubscribe"}},
		{name: "cjk split into words", in: "查询火车票", want: []string{"search", "train", "ticket"}},
		{name: "phrase before word", in: "check in at the hotel", want: []string{"checkin", "hotel"}},
		{name: "camel id", in: "queryPassengerTrainOrder", want: []string{"search", "train", "order"}},
		{name: "joined brand", in: "open YouTube", want: []string{"open", "youtube"}},
		{name: "repeats once", in: "delete, remove, 删除", want: []string{"delete"}},
		{name: "cities and flight", in: "北京到上海的机票", want: []string{"beijing", "shanghai", "flight"}},
		{name: "english blocker phrase", in: "in order to sort results", want: []string{"sort"}},
		{name: "phrase member of another group", in: "order by date", want: []string{"sort", "date"}},
		{name: "api description noise", in: "Returns the list of items; call the endpoint with a limit", want: []string{"list", "api"}},
		{name: "nothing", in: "the of and", want: nil},
		{name: "bad input", in: "\xff\x00删除\x1b", want: []string{"delete"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConceptsIn(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("ConceptsIn(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestAppendConceptsKeepsRepeats(t *testing.T) {
	got := AppendConcepts([]string{"x"}, "delete 删除 remove")
	want := []string{"x", "delete", "delete", "delete"}
	if !slices.Equal(got, want) {
		t.Errorf("AppendConcepts = %q, want %q", got, want)
	}
}

func TestParseLexicon(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
		check   func(t *testing.T, l *Lexicon)
	}{
		{name: "ok", in: "# c\n\ndelete: delete remove 删除\nlogin: sign_in 登录\n", check: func(t *testing.T, l *Lexicon) {
			if l.Len() != 2 || !slices.Equal(l.Concepts("removing"), []string{"delete"}) {
				t.Errorf("got %d groups, Concepts(removing) = %v", l.Len(), l.Concepts("removing"))
			}
			if !slices.Equal(l.ConceptsIn("please sign in"), []string{"login"}) {
				t.Errorf("ConceptsIn(please sign in) = %v", l.ConceptsIn("please sign in"))
			}
		}},
		{name: "empty file", in: "", check: func(t *testing.T, l *Lexicon) {
			if l.Len() != 0 || l.ConceptsIn("delete") != nil {
				t.Error("empty lexicon matched something")
			}
		}},
		{name: "symptom", in: "!outage: outage downtime 宕机\nuptime: uptime\n", check: func(t *testing.T, l *Lexicon) {
			if !l.IsSymptom("outage") || l.IsSymptom("uptime") || l.IsSymptom("nothing") {
				t.Errorf("IsSymptom: outage %v, uptime %v, nothing %v", l.IsSymptom("outage"), l.IsSymptom("uptime"), l.IsSymptom("nothing"))
			}
			if !slices.Equal(l.ConceptsIn("服务宕机了"), []string{"outage"}) || !slices.Equal(l.Names(), []string{"outage", "uptime"}) {
				t.Errorf("ConceptsIn(服务宕机了) = %v, Names() = %v", l.ConceptsIn("服务宕机了"), l.Names())
			}
		}},
		{name: "symptom without a name", in: "!: outage\n", wantErr: true},
		{name: "symptom marked twice", in: "!!outage: outage\n", wantErr: true},
		{name: "no colon", in: "delete remove\n", wantErr: true},
		{name: "bad name", in: "Delete: remove\n", wantErr: true},
		{name: "no members", in: "delete:\n", wantErr: true},
		{name: "duplicate group", in: "a: x\na: y\n", wantErr: true},
		{name: "mixed member", in: "a: 删除x\n", wantErr: true},
		{name: "stop word member", in: "a: the\n", wantErr: true},
		{name: "punctuation member", in: "a: ---\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseLexicon([]byte(tt.in))
			if tt.wantErr {
				if err == nil || !errors.Is(err, ErrLexicon) || !strings.Contains(err.Error(), "line") {
					t.Fatalf("ParseLexicon error = %v, want ErrLexicon naming the line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, l)
		})
	}
}

func TestLexiconBlockers(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{name: "blocker hides short member", in: "包含文件", want: []string{"file"}},
		{name: "short member alone", in: "安装这个包", want: []string{"install", "package"}},
		{name: "blocker is no concept", in: "包括", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConceptsIn(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("ConceptsIn(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := Concepts("包含"); got != nil {
		t.Errorf("Concepts of a blocker = %v, want nil", got)
	}
	l, err := ParseLexicon([]byte("-: 包含\npackage: 包\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 1 || l.ConceptsIn("包含包") == nil || len(l.ConceptsIn("包含")) != 0 {
		t.Errorf("parsed blockers: Len %d, ConceptsIn(包含包) %v", l.Len(), l.ConceptsIn("包含包"))
	}
}

// TestDefaultSymptoms checks the embedded lexicon's symptoms: a few specific problems,
// matched as users report them in either language, and no generic word for trouble.
func TestDefaultSymptoms(t *testing.T) {
	l := defaultLex(t)
	for _, name := range []string{"unreachable", "crash", "incident"} {
		if !l.IsSymptom(name) {
			t.Errorf("%s is not a symptom", name)
		}
	}
	for _, name := range []string{"error", "issue", "delete", "connect", "performance"} {
		if l.IsSymptom(name) {
			t.Errorf("%s is a symptom: keep symptoms specific", name)
		}
	}
	for _, s := range []string{"docker 连不上", "无法连接数据库", "I can't connect to docker", "Cannot connect to the Docker daemon",
		"unable to connect", "connection refused"} {
		if !slices.Contains(l.ConceptsIn(s), "unreachable") {
			t.Errorf("ConceptsIn(%q) = %v, want unreachable among them", s, l.ConceptsIn(s))
		}
	}
	if slices.Contains(l.ConceptsIn("connect the printer"), "unreachable") {
		t.Error("connecting is not failing to connect")
	}
}
