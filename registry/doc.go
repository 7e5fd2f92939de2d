// Package registry holds capability definitions: their types, ids, validation and lint,
// YAML/JSON loading, import of foreign tool catalogues and the built-in example registry.
//
// A registry is a tree: packs hold actions, recipes and other packs. A pack's guidance,
// tenant visibility, ACL and enabled flag are inherited by its subtree (see Snapshot).
package registry
