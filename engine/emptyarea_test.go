package engine_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// emptyAreaYAML: a car-rental pack whose one action has the status given, beside a
// flights pack whose search also knows airports.
const emptyAreaYAML = `
- id: rent
  version: 1
  resource_type: pack
  title: Car rental
  summary: Rent a car for a trip.
  aliases: [rent a car, car rental]
  intents: [search, book]
  entities: [car, rental]
  owner: test
  acl: {discover: ["*"], describe: ["*"], execute: [dev]}
  status: active
- id: rent.search
  version: 1
  resource_type: action
  title: Search rental cars
  summary: Searches rental cars at a city or an airport.
  aliases: [rent a car, rental car at the airport]
  intents: [search]
  entities: [car, rental, airport]
  when_to_use: [the user needs a rental car]
  owner: test
  acl: {discover: ["*"], describe: ["*"], execute: [dev]}
  status: STATUS
  side_effect: R
  risk_level: low
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
- id: fly
  version: 1
  resource_type: pack
  title: Flights
  summary: Search flights between airports.
  intents: [search]
  entities: [flight, airport]
  owner: test
  acl: {discover: ["*"], describe: ["*"], execute: [dev]}
  status: active
- id: fly.search
  version: 1
  resource_type: action
  title: Search flights
  summary: Searches flights from one airport to another on a date.
  intents: [search]
  entities: [flight, airport]
  when_to_use: [the user looks for a flight]
  owner: test
  acl: {discover: ["*"], describe: ["*"], execute: [dev]}
  status: active
  side_effect: R
  risk_level: low
  arguments_schema: {type: object}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
`

// TestEmptyAreaFirstNoMatch: a request whose best word match is a pack in which nothing
// is visible to the caller (its one action offline) is no_confident_match, not a neighbour
// from another area (the flight search, which knows airports); with the action active it
// is found, and a browse of the area still lists it.
func TestEmptyAreaFirstNoMatch(t *testing.T) {
	ctx := context.Background()
	rc := registry.RuntimeContext{Tenant: "default", User: "alice", Session: "s", Scopes: []string{"dev"}}
	search := func(status, query string) *registry.SearchResponse {
		t.Helper()
		caps, err := registry.LoadFS(fstest.MapFS{"r/r.yaml": {Data: []byte(strings.Replace(emptyAreaYAML, "STATUS", status, 1))}}, "r")
		if err != nil {
			t.Fatal(err)
		}
		e := open(t, engine.Options{Seed: caps})
		resp, err := e.Search(ctx, registry.SearchRequest{Query: query}, rc)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	const q = "rent a car at the Pudong airport for two days"
	off := search("offline", q)
	if off.Resolution != registry.NoConfidentMatch {
		t.Errorf("car action offline: %s (first %v), want no_confident_match", off.Resolution, firstID(off))
	}
	for _, m := range off.Matches {
		if strings.HasPrefix(m.ResourceID, "rent") {
			t.Errorf("car action offline: %s among the matches", m.ResourceID)
		}
	}
	if on := search("active", q); on.Resolution == registry.NoConfidentMatch || firstID(on) != "rent.search" {
		t.Errorf("car action active: %s, first %v; want rent.search, not no_confident_match", on.Resolution, firstID(on))
	}
	if fl := search("offline", "search flights from the airport"); firstID(fl) != "fly.search" || fl.Resolution == registry.NoConfidentMatch {
		t.Errorf("flights: %s, first %v; want fly.search found", fl.Resolution, firstID(fl))
	}
}

func firstID(r *registry.SearchResponse) string {
	if len(r.Matches) == 0 {
		return ""
	}
	return r.Matches[0].ResourceID
}
