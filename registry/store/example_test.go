package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

func Example() {
	ctx := context.Background()
	s, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	c := &registry.Capability{ID: "maintenance.codex.status", Version: 1, ResourceType: registry.TypeAction,
		Title: "Codex status", Owner: "platform-team", Status: registry.StatusActive,
		ArgumentsSchema: json.RawMessage(`{"type":"object"}`)}
	if err := s.Put(ctx, c, "alice"); err != nil {
		log.Fatal(err)
	}
	c.Title = "Codex version and path"
	fmt.Println(s.Put(ctx, c, "alice")) // changed without a version bump
	c.Version = 2
	fmt.Println(s.Put(ctx, c, "alice"))

	caps, gen, _ := s.Active()
	fmt.Println(len(caps), caps[0].Version, gen)

	recs, _ := s.AuditTail(10)
	for _, r := range recs {
		fmt.Println(strings.TrimSpace(fmt.Sprint(r.Seq, " ", r.Actor, " ", r.Action, " ", r.Decision, " ", r.Detail)))
	}
	n, err := s.VerifyAudit()
	fmt.Println(n, err)
	// Output:
	// store: definition changed without a version bump: maintenance.codex.status: version 1 is stored with a different definition
	// <nil>
	// 1 2 2
	// 1 alice maintenance.codex.status created
	// 2 alice maintenance.codex.status updated version 1 → 2
	// 2 <nil>
}

func ExampleStore_SpendToken() {
	ctx := context.Background()
	s, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	start := store.AuditRecord{Kind: store.KindRun, Actor: "alice", Action: "payments.create_refund", Decision: "allowed"}
	rec, err := s.SpendToken(ctx, "tok-7f3a", time.Now().Add(time.Minute), start)
	fmt.Println(rec.Seq, err)
	_, err = s.SpendToken(ctx, "tok-7f3a", time.Now().Add(time.Minute), start)
	fmt.Println(err)
	// Output:
	// 1 <nil>
	// store: token already spent: tok-7f3a
}
