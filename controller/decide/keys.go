package decide

import (
	"slices"
	"strings"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
)

// Per-key reloads (--reload-on-used-keys-only, or per workload
// reloader.stakater.com/reload-on-used-keys-only). In per-key mode a
// resource whose uses all name keys (keyRefs, items), or for which the keys
// annotation lists keys, is watched through the hash of those keys only
// (hash.Keys.Subset over the per-key digests the cache keeps): a change to
// another key changes neither that hash nor the record, so nothing rolls.
//
// The record and the reload markers hold whatever hash the mode in force
// computes, in the same places as before: nothing notes the mode. Turning
// the mode on or off must roll nothing, so each watched resource carries
// the hash under the other formula too (Watched.AltHash), and a baseline
// equal to it is adopted (planChange): the content is what was applied
// under the old mode, and only the record is rewritten, on the metadata.
// The pod template, and so the pods, do not change on adoption. A baseline
// equal to neither hash is a change under both formulas and rolls once.
//
// Per-key digests are keyed (hash/keyed.go), so a record reveals nothing
// of the values it covers. Releases before that recorded the subset hash of
// unkeyed digests; the cache keeps both, and a baseline equal to the
// unkeyed hash (Watched.UnkeyedHash) is adopted the same way: the upgrade
// rolls nothing. The pod template's reload marker keeps the unkeyed hash
// until the next reload of that resource.
//
// Limit: the record does not say which keys its hash covered. Editing the
// template to read other keys in per-key mode (a new keyRef) changes the
// subset hash, and the workload rolls once more after the rollout of the
// edit itself.

// KeyScope is which keys of a watched resource count, and why.
type KeyScope struct {
	// PerKey is true when only Keys count; false when every key does.
	PerKey bool
	// Keys are the keys that count (sorted); empty unless PerKey.
	Keys []string
	// Why says, for people, what the scope follows: the mode, the uses
	// (keyRef, items, envFrom, whole volume) and the keys annotation.
	Why string
}

// usedKeysOnly is the mode for this workload: its annotation, else the
// flag. An invalid annotation is a problem and the flag decides.
func (d *decider) usedKeysOnly(ps *problems) (on bool, offWhy string) {
	on, set, err := d.o.Names.UsedKeysOnlyFor(d.w)
	if err != nil {
		ps.add(err.Error())
	}
	if set {
		return on, "per-key reloads are off for this workload (" + d.o.Names.UsedKeysOnly + "=false)"
	}
	return d.o.UsedKeysOnly, "per-key reloads are off (--reload-on-used-keys-only)"
}

// keyRules is what the scopes are computed from, read once per decision.
type keyRules struct {
	names  annotations.Names
	hash   hash.Algorithm
	on     bool
	uses   map[Resource]refs.KeyUse
	listed map[refs.Kind]map[string][]string
	texts  map[refs.Kind]string
	// offWhy says what turned per-key reloads off, when they are.
	offWhy string
}

func (d *decider) readKeyRules(ps *problems) keyRules {
	kr := keyRules{names: d.o.Names, hash: d.o.Hash, uses: map[Resource]refs.KeyUse{},
		listed: map[refs.Kind]map[string][]string{}, texts: map[refs.Kind]string{}}
	kr.on, kr.offWhy = d.usedKeysOnly(ps)
	for _, u := range refs.KeyUses(&d.v.Template.Spec) {
		kr.uses[Resource{u.Kind, u.Name}] = u
	}
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret} {
		keys, text, errs := d.o.Names.ListedKeys(d.w, k)
		ps.addErrs(errs)
		kr.listed[k], kr.texts[k] = keys, text
	}
	return kr
}

// scope is the per-key scope of res: which keys would count in per-key
// mode. Keys the annotation lists for res always count, with those the
// keyed uses name; without a listing, a whole use makes every key count. A
// resource only named by the reload list has no use: the annotation alone
// can scope it.
func (kr keyRules) scope(res Resource) KeyScope {
	if res.Kind == refs.SecretProviderClass {
		return KeyScope{Why: "a SecretProviderClass counts whole"}
	}
	u, used := kr.uses[res]
	listed, isListed := kr.listed[res.Kind][res.Name]
	var keyed string
	if len(u.KeysVia) > 0 {
		keyed = "named by " + viaList(u.KeysVia, keyedText)
	}
	switch {
	case isListed:
		why := "listed by " + kr.texts[res.Kind]
		if u.Whole() {
			why = "read whole through " + viaList(u.WholeVia, wholeText) + ", " + why
		}
		if keyed != "" {
			why += "; and " + keyed
		}
		return KeyScope{PerKey: true, Keys: union(u.Keys, listed), Why: why}
	case used && !u.Whole():
		return KeyScope{PerKey: true, Keys: u.Keys, Why: keyed}
	case used:
		return KeyScope{Why: "read whole through " + viaList(u.WholeVia, wholeText) + " (list keys with " + kr.names.KeysKey(res.Kind) + ")"}
	}
	return KeyScope{Why: "not used by the pod template; only the keys annotation can name its keys"}
}

// watchedKeys sets wt's hash by the mode, and its hashes under the other
// formulas (AltHash, UnkeyedHash) for adoption, from the per-key digests in
// st.
func (kr keyRules) watchedKeys(wt *Watched, st State) {
	sc := kr.scope(wt.Resource)
	if !kr.on {
		wt.Scope = KeyScope{Why: kr.offWhy}
		if sc.PerKey && st.Exists {
			wt.AltHash = st.Keys.Subset(kr.hash, sc.Keys)
			wt.UnkeyedHash = kr.unkeyed(st, sc, wt.AltHash)
		}
		return
	}
	wt.Scope = sc
	if sc.PerKey && st.Exists {
		wt.AltHash, wt.Hash = wt.Hash, st.Keys.Subset(kr.hash, sc.Keys)
		wt.UnkeyedHash = kr.unkeyed(st, sc, wt.Hash)
	}
}

// unkeyed is the subset hash of sc over st's unkeyed digests, "" when it is
// keyed (the controller has no key).
func (kr keyRules) unkeyed(st State, sc KeyScope, keyed string) string {
	if h := st.Keys.UnkeyedSubset(kr.hash, sc.Keys); h != keyed {
		return h
	}
	return ""
}

func viaList(vs []refs.Via, text map[refs.Via]string) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, text[v])
	}
	return strings.Join(parts, ", ")
}

// keyedText and wholeText name a use that names keys and one that reads
// every key, for explain.
var (
	keyedText = map[refs.Via]string{refs.ViaEnv: "env keyRef", refs.ViaVolume: "volume items", refs.ViaProjected: "projected items"}
	wholeText = map[refs.Via]string{refs.ViaEnvFrom: "envFrom", refs.ViaVolume: "volume without items", refs.ViaProjected: "projected source without items"}
)

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
