# Bastion: one binary (manager, runner, dev, user), its CRDs and its console.
# `make dev` runs the product on an embedded control plane; `make test` runs
# every test. Both build what they need first.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

# Kubernetes version of the envtest control plane. It must be the minor that
# the k8s.io/api in go.mod belongs to (controller-runtime v0.25 -> k8s 1.37).
K8S_VERSION ?= v1.37.1
ETCD_VERSION ?= v3.6.16
CONTROLLER_TOOLS_VERSION ?= v0.23.0
# Terraform for the runner's tests, built from the Go module proxy.
TERRAFORM_VERSION ?= v1.5.7
GOTESTSUM_VERSION ?= v1.13.0
# The helm CLI for docs/install.md's throwaway cluster: the version of the
# Helm SDK that test/cluster installs with (its go.mod).
HELM_VERSION ?= v4.3.1

ENVTEST_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/bastion/envtest
ENVTEST_ASSETS := $(ENVTEST_CACHE)/k8s-$(K8S_VERSION:v%=%)-etcd-$(ETCD_VERSION:v%=%)-linux-amd64
export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/bastion/tools
TERRAFORM := $(TOOLS_CACHE)/terraform-$(TERRAFORM_VERSION:v%=%)/terraform
HELM := $(TOOLS_CACHE)/helm-$(HELM_VERSION:v%=%)/helm

LOCALBIN := $(CURDIR)/bin
CONTROLLER_GEN := $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOTESTSUM := $(LOCALBIN)/gotestsum-$(GOTESTSUM_VERSION)
BASTION := $(LOCALBIN)/bastion

VERSION ?= 0.1.0-$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
LDFLAGS := -X github.com/bastion-dev/bastion/internal/version.Version=$(VERSION)
# The sources' hash, the same in bastion and the bastion-runner built with
# it: local runs start bastion-runner only when it was built from the same
# sources (internal/version.Build).
BUILD_STAMP = $(shell cat $(sort $(GO_SOURCES)) go.mod go.sum | sha256sum | cut -c1-16)

GO_SOURCES := $(shell find . -name '*.go' -not -path './console/node_modules/*' -not -path './bin/*')
CONSOLE_SOURCES := $(shell find console/src console/index.html console/package.json console/vite.config.* console/tsconfig*.json -type f 2>/dev/null)

.PHONY: all
all: build

##@ Help
.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
.PHONY: dev
dev: envtest-assets build ## Run Bastion on an embedded control plane (prints URL and login).
	$(BASTION) dev $(DEV_ARGS)

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the kubebuilder markers.
	$(CONTROLLER_GEN) crd rbac:roleName=bastion-manager paths=./api/... paths=./controllers/... paths=./apiserver/... paths=./internal/users/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	# Secrets and ConfigMaps: a second ClusterRole, bound only in the
	# namespaces the manager owns (internal/nsaccess).
	$(CONTROLLER_GEN) rbac:roleName=bastion-namespace paths=./internal/nsaccess/... output:rbac:artifacts:config=config/rbac/namespace
	# The Helm chart ships copies (a chart cannot read outside its directory);
	# test/packaging fails when they differ.
	rm -f config/helm/bastion/files/crds/*.yaml
	cp config/crd/bases/*.yaml config/helm/bastion/files/crds/
	cp config/rbac/role.yaml config/helm/bastion/files/rbac/role.yaml
	cp config/rbac/namespace/role.yaml config/helm/bastion/files/rbac/namespace-role.yaml

.PHONY: envtest-assets
envtest-assets: $(ENVTEST_ASSETS)/kube-apiserver ## Build etcd, kube-apiserver and kubectl from Go modules (cached outside the repo).

$(ENVTEST_ASSETS)/kube-apiserver:
	hack/envtest-assets.sh $(K8S_VERSION) $(ETCD_VERSION) $(ENVTEST_ASSETS)

.PHONY: terraform
terraform: $(TERRAFORM) ## Build terraform for the runner's tests (cached outside the repo).

.PHONY: helm
helm: $(HELM) ## Build the helm CLI from Go modules (cached outside the repo; docs/install.md).

$(HELM):
	rm -rf $(@D).tmp && mkdir -p $(@D).tmp
	GOBIN=$(@D).tmp CGO_ENABLED=0 go install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)
	rm -rf $(@D) && mv $(@D).tmp $(@D)

# Built into a temporary directory and moved into place, so an interrupted
# build never looks finished.
$(TERRAFORM):
	rm -rf $(@D).tmp && mkdir -p $(@D).tmp
	GOBIN=$(@D).tmp CGO_ENABLED=0 go install github.com/hashicorp/terraform@$(TERRAFORM_VERSION)
	rm -rf $(@D) && mv $(@D).tmp $(@D)

##@ Build
.PHONY: build
build: $(BASTION) ## Build bin/bastion with the console embedded, and bin/bastion-runner beside it.

# bastion-runner is `bastion runner` alone, which local runs start when it
# lies beside bastion with the same version (docs/architecture.md, "Two
# binaries"): always built together.
$(BASTION): console/dist/index.html $(GO_SOURCES) go.mod go.sum
	flags="$(LDFLAGS) -X github.com/bastion-dev/bastion/internal/version.Build=$(BUILD_STAMP)"; \
	CGO_ENABLED=0 go build -trimpath -ldflags "$$flags" -o $@ . && \
	CGO_ENABLED=0 go build -trimpath -ldflags "$$flags" -o $(LOCALBIN)/bastion-runner ./internal/cmd/bastion-runner

.PHONY: console
console: console/dist/index.html ## Build the console into console/dist.

console/node_modules/.package-lock.json: console/package-lock.json
	cd console && npm ci --no-audit --no-fund

console/dist/index.html: console/node_modules/.package-lock.json $(CONSOLE_SOURCES)
	cd console && npm run build

##@ Test
.PHONY: test
test: envtest-assets ## Run every test: vet, Go (unit + envtest + e2e), packaging, console (types, Vitest, Playwright).
	# Playwright waits on the browser and the server most of the time; the
	# checks that need neither fill that time (two jobs: Playwright, and the
	# others one after another). The Go tests come after, with the machine
	# to themselves: some bound how long the product may take.
	$(MAKE) --no-print-directory -j2 --output-sync=target test-e2e test-checks
	$(MAKE) --no-print-directory test-go

# What `make test` runs beside Playwright.
.PHONY: test-checks
test-checks: vet test-console test-packaging

.PHONY: vet
vet: ## go vet, and gofmt must have nothing to say.
	go vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt -w these files: $$unformatted"; exit 1; fi

.PHONY: test-go
# The final-status test bounds a latency on this machine (2 s from a task's
# last line to its final status, for 200 tasks at once), so it runs first
# and alone: beside the apiserver package's envtest servers its worst
# doubled, and once went past the bound (docs/benchmarks.md, "The
# final-status bound needs the machine to itself").
# Then go test starts packages in the order named, two at a time on two
# cores: test/e2e, the longest and mostly waiting on its servers, first,
# beside apiserver; the other packages follow in the second slot. Listed in
# import-path order, test/e2e came last and ran alone at the end.
ALONE_TEST := ^TestDev_finalStatusOf200ShortTasksArrivesWithin2sOfTheirLastLine$$
test-go: envtest-assets $(TERRAFORM) console/dist/index.html $(GOTESTSUM) $(BASTION) ## Go unit, envtest and end-to-end tests.
	BASTION_BIN=$(BASTION) $(GOTESTSUM) --format testname -- -count=1 -timeout 10m -run '$(ALONE_TEST)' ./test/e2e
	PATH="$(dir $(TERRAFORM)):$$PATH" BASTION_BIN=$(BASTION) $(GOTESTSUM) --format testname -- -count=1 -timeout 30m -skip '$(ALONE_TEST)' ./test/e2e ./apiserver ./...

# Its own Go module (test/packaging/go.mod), so that Helm's and kustomize's
# dependencies never enter the bastion binary's module or its build.
.PHONY: test-packaging
test-packaging: envtest-assets $(GOTESTSUM) ## The Helm chart and config/default, rendered and dry-run applied to envtest; RBAC by SubjectAccessReview.
	cd test/packaging && go vet ./... && $(GOTESTSUM) --format testname -- -count=1 -timeout 30m ./...

# After the console's build: both run tsc -b, which writes its build info,
# and `make test` runs this beside Playwright, whose binary needs the build.
.PHONY: test-console
test-console: console/node_modules/.package-lock.json console/dist/index.html ## Console type check, Vitest, and every screen's first load within 300 KB gzip (docs/benchmarks.md).
	cd console && npm run typecheck && npm test && npm run size

.PHONY: test-e2e
test-e2e: envtest-assets $(TERRAFORM) $(BASTION) ## Playwright against `bastion dev` on a free port.
	# Terraform 1.5.7 first on PATH, as for the Go tests: the task tests run it.
	cd console && PATH="$(dir $(TERRAFORM)):$$PATH" BASTION_BIN=$(BASTION) npm run e2e

##@ Images and deployment
# Image names; the Helm chart's image values and the manager's
# --runner-image-* flags name the same images.
REGISTRY ?= ghcr.io/bastion-dev
TAG ?= $(VERSION)
IMG ?= $(REGISTRY)/bastion:$(TAG)
RUNNER_APPS := ansible terraform bash
CONTAINER_TOOL ?= docker
KUBECTL ?= kubectl

.PHONY: docker-build
docker-build: ## Build the manager image and the runner images (ansible, terraform, bash).
	$(CONTAINER_TOOL) build --target manager --build-arg VERSION=$(VERSION) -t $(IMG) .
	for app in $(RUNNER_APPS); do \
		$(CONTAINER_TOOL) build --target runner-$$app --build-arg VERSION=$(VERSION) -t $(REGISTRY)/bastion-runner-$$app:$(TAG) . ; \
	done

.PHONY: docker-push
docker-push: ## Push the images that docker-build made.
	$(CONTAINER_TOOL) push $(IMG)
	for app in $(RUNNER_APPS); do $(CONTAINER_TOOL) push $(REGISTRY)/bastion-runner-$$app:$(TAG); done

.PHONY: deploy
deploy: ## Install CRDs, RBAC and the manager with kustomize (config/default) into the current kubectl context.
	$(KUBECTL) apply --server-side -k config/default

.PHONY: undeploy
undeploy: ## Remove what deploy installed (CRDs too: every project resource goes with them).
	$(KUBECTL) delete --ignore-not-found -k config/default

##@ Hostile input
# Each fuzz target runs for FUZZTIME; `make test` runs them over their seed
# corpora (testdata/fuzz) as ordinary tests. A crasher the fuzzer finds is
# written to testdata/fuzz/<FuzzName>/ and stays there as a regression seed.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	apiserver:FuzzDecode_everyRequestBodyAnswersACleanErrorWithoutEchoingValues \
	apiserver:FuzzDecode_acceptedBodiesRoundTrip \
	apiserver:FuzzGitURL_acceptsOnlyWhatGitReadsAsARepositoryNeverAnOption \
	apiserver:FuzzPaths_inventoryAndPlaybookStayInsideTheRepository \
	apiserver:FuzzEnvironment_specKeepsValidJSONAndProcessSafeNames \
	apiserver:FuzzTemplate_validateAnswersSpecMessagesAndKeepsArgumentsAsOneElementEach \
	apiserver:FuzzTask_startRulesRefuseOptionsAndCheckTheSurvey \
	apiserver:FuzzIntegrationItems_matchersAndValuesNeedEveryFieldAndKnownKinds \
	apiserver:FuzzWebhookMatch_pathsFindWhatWasPutThereAndValuesStayJSON \
	apiserver:FuzzWebhookAuth_onlyTheRightSignatureOrTokenPasses \
	apiserver:FuzzOutputJSON_isByteForByteWhatJSONMarshalWrites \
	internal/jsonw:FuzzAppendString_isByteForByteWhatJSONMarshalWrites \
	internal/runproto:FuzzBatchJSON_isByteForByteWhatJSONMarshalWrites \
	internal/runproto:FuzzDecodeBatch_isWhatEncodingJSONReads \
	internal/backup:FuzzParse_refusesCleanlyOrRoundTrips \
	internal/versions:FuzzNext_keepsPrefixAndSuffixAndAddsOne \
	internal/cron:FuzzValidate_neverPanicsAndAgreesWithParse

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 30s).
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$pkg $$name ($(FUZZTIME))"; \
		go test ./$$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

##@ Tools
$(CONTROLLER_GEN):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(LOCALBIN)/controller-gen $@

$(GOTESTSUM):
	GOBIN=$(LOCALBIN) go install gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
	mv $(LOCALBIN)/gotestsum $@

.PHONY: clean
clean: ## Remove build output (not the envtest cache).
	rm -rf bin console/node_modules console/test-results console/playwright-report
	find console/dist -mindepth 1 -not -name .keep -delete 2>/dev/null || true

##@ Benchmarks
.PHONY: bench-dispatch
bench-dispatch: envtest-assets ## Dispatch rate: 1,000 Tasks to Jobs through the real kube-apiserver (docs/benchmarks.md).
	go test ./controllers -run '^$$' -bench BenchmarkTaskDispatch -benchtime 1x -count 3 -timeout 30m

.PHONY: bench-api
bench-api: envtest-assets $(BASTION) ## P1, P2, P3 and P5 of issue 22 through /api on a throwaway `bastion dev` (docs/benchmarks.md).
	go run ./hack/benchapi -bastion $(BASTION)

##@ Soak (issue 11: the long versions of the reliability tests)
# Each part is its own target and a prerequisite of soak. BASTION_SOAK=1
# makes the tests run their long versions; `make test` runs the short ones.
.PHONY: soak
soak: soak-faults soak-restarts ## Long reliability runs: faults, load, manager SIGKILLs, kube-apiserver restarts (docs/reliability.md).

# Items 2, 3 and 5: stream faults, store faults, websocket and task-creation load;
# issue 19 item 5: 5,000 tasks through the runner endpoint leave no state behind.
SOAK_FAULTS_TESTS := TestStreamFaults_|TestStoreFaults_|TestLoad_|TestRunnerAttack_perTaskState
.PHONY: soak-faults
soak-faults: envtest-assets
	BASTION_SOAK=1 go test ./apiserver -run '$(SOAK_FAULTS_TESTS)' -count=1 -v -timeout 40m

# Items 1 and 4: 60 manager SIGKILLs, 15 kube-apiserver restarts.
.PHONY: soak-restarts
soak-restarts: envtest-assets $(BASTION)
	BASTION_SOAK=1 BASTION_BIN=$(BASTION) go test ./test/e2e -run '^TestRestart_' -count=1 -v -timeout 60m

##@ Throwaway cluster (hack/cluster, docs/install.md)
# A single-node cluster on this host (root): the control plane and the node
# built from Go modules at K8S_VERSION, containerd/runc/CNI from Debian.
CLUSTER_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/bastion/cluster
CLUSTER_BIN := $(CLUSTER_CACHE)/k8s-$(K8S_VERSION:v%=%)-linux-amd64
# Image archives (make images); the cluster's containerd imports them.
IMAGES_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/bastion/images/archives
# The running cluster's state: certs, data, logs, pids.
CLUSTER_WORK ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/bastion/cluster-run
CLUSTER_ENV := WORK=$(CLUSTER_WORK) K8S_VERSION=$(K8S_VERSION) ENVTEST_BIN=$(ENVTEST_ASSETS) CLUSTER_BIN=$(CLUSTER_BIN)

.PHONY: cluster-bins
cluster-bins: $(CLUSTER_BIN)/kube-proxy ## Build kube-controller-manager, kube-scheduler, kubelet and kube-proxy (cached).

$(CLUSTER_BIN)/kube-proxy:
	hack/cluster/build.sh $(K8S_VERSION) $(CLUSTER_BIN)

$(IMAGES_DIR)/pause.tar:
	hack/images/build.sh $(IMAGES_DIR) /dev/null /dev/null $(REGISTRY) $(TAG) pause

.PHONY: cluster-up
cluster-up: envtest-assets cluster-bins $(IMAGES_DIR)/pause.tar ## Start a single-node cluster (root); KUBECONFIG=$(CLUSTER_WORK)/admin.kubeconfig.
	$(CLUSTER_ENV) PAUSE_IMAGE_ARCHIVE=$(IMAGES_DIR)/pause.tar hack/cluster/cluster-up.sh

.PHONY: cluster-down
cluster-down: ## Stop the cluster and undo every change it made to the host.
	$(CLUSTER_ENV) hack/cluster/cluster-down.sh

.PHONY: images
images: $(BASTION) $(TERRAFORM) ## Build the manager and runner images as OCI archives, without Docker; import them into the cluster if it is up.
	hack/images/build.sh $(IMAGES_DIR) $(BASTION) $(TERRAFORM) $(REGISTRY) $(TAG)
	$(CLUSTER_ENV) hack/cluster/import-images.sh $(IMAGES_DIR)/*.tar

.PHONY: e2e-cluster
# The test logs the time from this target's start to the first task's
# success (docs/benchmarks.md): E2E_START is taken before anything builds.
e2e-cluster: ## helm install (2 replicas, PostgreSQL on the host) on a fresh single-node cluster; tasks run as real pods, the leader's pod is evicted mid-task (test/cluster). Tears it down after.
	export E2E_START=$$(date +%s); \
	$(MAKE) envtest-assets cluster-bins images && \
	$(MAKE) cluster-down && \
	trap '$(MAKE) -C $(CURDIR) cluster-down' EXIT && \
	$(MAKE) cluster-up && \
	$(CLUSTER_ENV) hack/cluster/import-images.sh $(IMAGES_DIR)/*.tar && \
	cd test/cluster && KUBECONFIG=$(CLUSTER_WORK)/admin.kubeconfig BASTION_IMAGE_TAG=$(TAG) \
		BASTION_REGISTRY=$(REGISTRY) CLUSTER_WORK=$(CLUSTER_WORK) IMAGES_DIR=$(IMAGES_DIR) \
		go test -count=1 -timeout 20m -v ./...
