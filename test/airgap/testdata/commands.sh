# build, scan in a local OCI layout, and only if the gate passes push, sign and write the lock
reloader-release local --platforms linux/amd64 --registry registry.example --version v1.2.3 --trivy trivy --trivy-cache-dir trivy-cache --skip-db-update --policy policy.yaml --support support.yaml --out release
# connected side: verify the release and pack it into one file
reloader-mirror export --lock-ref registry.example/reloader-dev/reloader-release:v1.2.3 --key release/keys/cosign.pub --to reloader-v1.2.3.tar
# disconnected side: verify offline, push by digest (credentials from DOCKER_CONFIG), tags last
reloader-mirror import -f reloader-v1.2.3.tar --key release/keys/cosign.pub --target harbor.internal/platform/reloader --receipt receipt.json
# the digest-pinned Helm values (and install command) for that registry
reloader-mirror values -f reloader-v1.2.3.tar --key release/keys/cosign.pub --target harbor.internal/platform/reloader > values.yaml
# keep it that way: admit only digest-pinned images from the mirror (--mode audit first, then enforce)
reloader-mirror policy -f reloader-v1.2.3.tar --key release/keys/cosign.pub --target harbor.internal/platform/reloader --namespace reloader --format vap --mode enforce --output policies
# prove it on the cluster: dry-run Pods, the release admitted and everything else denied
reloader-mirror policy check -f reloader-v1.2.3.tar --key release/keys/cosign.pub --target harbor.internal/platform/reloader --namespace reloader --kubeconfig admin.kubeconfig
# the next release: the same pipeline, signed with the same key
reloader-release local --platforms linux/amd64 --registry registry.example --version v1.2.4 --trivy trivy --trivy-cache-dir trivy-cache --skip-db-update --policy policy.yaml --support support.yaml --out release-v1.2.4 --key release/keys/cosign.key
# connected side, upgrade: only what the release already mirrored lacks
reloader-mirror export --lock-ref registry.example/reloader-dev/reloader-release:v1.2.4 --key release/keys/cosign.pub --since reloader-v1.2.3.tar --to reloader-v1.2.4-since-v1.2.3.tar
# disconnected side, upgrade: checks the target holds the rest, verifies the whole release, tags last
reloader-mirror import -f reloader-v1.2.4-since-v1.2.3.tar --key release/keys/cosign.pub --target harbor.internal/platform/reloader --receipt receipt-v1.2.4.json
# the values for the new release; helm upgrade with the chart they name, by digest
reloader-mirror values -f reloader-v1.2.4-since-v1.2.3.tar --key release/keys/cosign.pub --target harbor.internal/platform/reloader > values-v1.2.4.yaml
