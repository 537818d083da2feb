package registry

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Credential is one registry login.
type Credential struct {
	Username, Password string
}

// WriteDockerConfig writes dir/config.json as `docker login` leaves it (one
// base64 "user:password" per registry host), so a test can point
// DOCKER_CONFIG at dir and exercise the credentials users actually give.
func WriteDockerConfig(dir string, logins map[string]Credential) error {
	auths := map[string]map[string]string{}
	for host, c := range logins {
		auths[host] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password))}
	}
	b, err := json.MarshalIndent(map[string]any{"auths": auths}, "", "\t")
	if err != nil {
		return fmt.Errorf("encoding the Docker config: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the Docker config directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		return fmt.Errorf("writing the Docker config: %w", err)
	}
	return nil
}
