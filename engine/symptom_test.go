package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/registry"
)

func TestSymptomsOf(t *testing.T) {
	tests := []struct {
		name              string
		symptoms, concept []string
		want              []string
	}{
		{name: "none", concept: []string{"delete", "view"}},
		{name: "concept", concept: []string{"container", "unreachable"}, want: []string{"unreachable"}},
		{name: "after the parse's own", symptoms: []string{"disk_full"}, concept: []string{"crash"}, want: []string{"disk_full", "crash"}},
		{name: "named by the parse's own", symptoms: []string{"npm_registry_unreachable"}, concept: []string{"unreachable"},
			want: []string{"npm_registry_unreachable"}},
		{name: "already there", symptoms: []string{"crash"}, concept: []string{"crash"}, want: []string{"crash"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			own := append(make([]string, 0, 8), tt.symptoms...)
			p := &query.Parsed{Symptoms: own, Concepts: tt.concept}
			got := symptomsOf(p)
			if !slices.Equal(got, tt.want) && len(got)+len(tt.want) > 0 {
				t.Fatalf("symptomsOf = %q, want %q", got, tt.want)
			}
			if !slices.Equal(p.Symptoms, tt.symptoms) || own[:cap(own)][len(own)] != "" {
				t.Fatalf("the parse's symptoms changed: %q", own[:cap(own)])
			}
		})
	}
}

// TestSymptomReportedInOtherLanguage searches the built-in registry for a problem reported
// in words its capability documents in another language only: maintenance.docker.info's
// alias "cannot connect to the docker daemon" meets "连不上", and "闪退" meets docker.logs'
// "why did my container crash".
func TestSymptomReportedInOtherLanguage(t *testing.T) {
	e, err := Open(context.Background(), Options{Dir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dev := registry.RuntimeContext{Tenant: "default", User: "alice", Scopes: []string{"dev"}, OS: "linux"}
	for _, tt := range []struct{ query, want, symptom string }{
		{"先别删任何东西，看看 docker 为什么连不上", "maintenance.docker.info", "unreachable"},
		{"I can't connect to docker", "maintenance.docker.info", "unreachable"},
		{"容器老是闪退", "maintenance.docker.logs", "crash"},
	} {
		resp, err := e.Search(context.Background(), registry.SearchRequest{Query: tt.query}, dev)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Matches) == 0 || resp.Matches[0].ResourceID != tt.want || !slices.Contains(resp.Matches[0].MatchedSymptoms, tt.symptom) {
			t.Fatalf("%s: matches %+v", tt.query, resp.Matches)
		}
		if resp.Resolution != registry.Confident {
			t.Errorf("%s: resolution %s", tt.query, resp.Resolution)
		}
	}
}
