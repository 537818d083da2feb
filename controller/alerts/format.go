package alerts

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Object names a Kubernetes object. It has no room for data: alerts say which
// object changed, never what it holds.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Event is one reload: the workload rolled and the ConfigMaps/Secrets whose
// change caused it. Only names cross this API, so a caller cannot leak a
// value into a chat channel by mistake.
type Event struct {
	Workload  Object
	Resources []Object
	// Time is when the reload happened; zero means when Notify or Send is called.
	Time time.Time
	// Kind is what happened (a payload kind); "" is KindReloaded. Change
	// identifies the change a KindAwaitingApproval alert asks approval for.
	Kind   string
	Change string
}

// Payload kinds.
const (
	KindReloaded        = "Reloaded"        // an alert after a reload
	KindReloadRequested = "ReloadRequested" // --webhook-url mode: nothing was reloaded
	// KindAwaitingApproval: the reload waits for a person to approve its
	// change; KindNotified: the workload is notify-only, nothing was
	// reloaded.
	KindAwaitingApproval = "ReloadAwaitingApproval"
	KindNotified         = "ReloadNotified"
)

func (e Event) kind() string {
	if e.Kind == "" {
		return KindReloaded
	}
	return e.Kind
}

// Payload is the body of SinkJSON alerts and of Webhook requests.
type Payload struct {
	Kind      string    `json:"kind"`
	Workload  Object    `json:"workload"`
	Resources []Object  `json:"resources"`
	Time      time.Time `json:"time"`
	// Message is the human text the chat sinks show, without markup.
	Message        string `json:"message"`
	AdditionalInfo string `json:"additionalInfo,omitempty"`
	// Change identifies the change a ReloadAwaitingApproval alert asks
	// approval for (reloader.stakater.com/approve).
	Change string `json:"change,omitempty"`
	// Webhook is the original --webhook-url body's only field, kept so
	// receivers written for it still find it.
	Webhook string `json:"webhook,omitempty"`
}

// message is the original's text, in Slack markup, generalised to several
// resources. Kinds are the caller's ("ConfigMap"), where the original
// printed "CONFIGMAP".
func message(e Event, info string, kind string) string {
	var b strings.Builder
	if info != "" {
		b.WriteString(info)
		b.WriteString(" : ")
	}
	b.WriteString("Reloader detected changes in ")
	if len(e.Resources) == 0 {
		b.WriteString("its inputs")
	}
	for i, r := range e.Resources {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "*%s* of type *%s* in namespace *%s*", r.Name, r.Kind, r.Namespace)
	}
	verb, tail := "reloaded", ""
	switch kind {
	case KindReloadRequested:
		verb = "requested a reload of"
	case KindAwaitingApproval:
		verb, tail = "a reload of", " waits for approval of change *"+e.Change+"*"
	case KindNotified:
		verb, tail = "did not reload", " (notify-only)"
	}
	fmt.Fprintf(&b, ". Hence %s *%s* of type *%s* in namespace *%s*%s", verb, e.Workload.Name, e.Workload.Kind, e.Workload.Namespace, tail)
	return b.String()
}

func plain(s string) string { return strings.ReplaceAll(s, "*", "") }

// body renders e for sink, returning the content type and bytes.
func body(sink Sink, e Event, info string) (string, []byte, error) {
	const jsonType = "application/json"
	msg := message(e, info, e.kind())
	var v any
	switch sink {
	case SinkSlack:
		type attachment struct {
			Color      string `json:"color"`
			AuthorName string `json:"author_name"`
			Text       string `json:"text"`
		}
		v = struct {
			Attachments []attachment `json:"attachments"`
		}{[]attachment{{Color: "good", AuthorName: "Reloader", Text: msg}}}
	case SinkTeams, SinkGChat:
		v = struct {
			Text string `json:"text"`
		}{msg}
	case SinkRaw:
		return "text/plain", []byte(plain(msg)), nil
	case SinkJSON:
		v = payload(e.kind(), e, info)
	default:
		return "", nil, fmt.Errorf("alerts: unknown sink %q", sink)
	}
	b, err := json.Marshal(v)
	return jsonType, b, err
}

func payload(kind string, e Event, info string) Payload {
	res := e.Resources
	if res == nil {
		res = []Object{} // "resources": [] rather than null, for strict receivers
	}
	return Payload{
		Kind:           kind,
		Workload:       e.Workload,
		Resources:      res,
		Time:           e.Time.UTC(),
		Message:        plain(message(e, "", kind)),
		AdditionalInfo: info,
		Change:         e.Change,
	}
}

func jsonBody(v any) (string, []byte, error) {
	b, err := json.Marshal(v)
	return "application/json", b, err
}
