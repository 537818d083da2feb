package refs

// kindNames are the spellings of each Kind, in one table so a new kind is
// one entry.
var kindNames = map[Kind]struct{ title, plural, upper string }{
	ConfigMap:           {"ConfigMap", "configmaps", "CONFIGMAP"},
	Secret:              {"Secret", "secrets", "SECRET"},
	SecretProviderClass: {"SecretProviderClass", "secretproviderclasses", "SECRETPROVIDERCLASS"},
}

// Kinds are the resource kinds a workload can reload for, in a fixed order.
func Kinds() []Kind { return []Kind{ConfigMap, Secret, SecretProviderClass} }

// spelling is k's row; an unknown kind is spelt as a ConfigMap, as the
// original's marker code does.
func (k Kind) spelling() struct{ title, plural, upper string } {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return kindNames[ConfigMap]
}

// Title is the kind as Kubernetes spells it ("ConfigMap").
func (k Kind) Title() string { return k.spelling().title }

// Plural is the API resource name ("configmaps").
func (k Kind) Plural() string { return k.spelling().plural }

// Upper is the kind as the original's reload markers spell it
// ("CONFIGMAP", in STAKATER_<NAME>_CONFIGMAP and last-reloaded-from).
func (k Kind) Upper() string { return k.spelling().upper }
