// tokdyn's commands, by name: each has a deck schema (for --help and parsing) and a run function.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "tokdyn/core/comm.hpp"
#include "tokdyn/core/deck.hpp"

namespace tokdyn {

struct Command {
  std::string name;
  std::string summary;
  std::function<DeckSchema()> schema;
  std::function<int(const Comm&, const DeckSchema&, const Arguments&)> run;
};

// The command list (src/app/commands.cpp): a new command is its file plus one line there.
const std::vector<Command>& commands();

DeckSchema transformer_schema();
int run_transformer(const Comm& comm, const DeckSchema& schema, const Arguments& args);
DeckSchema sde_schema();
int run_sde(const Comm& comm, const DeckSchema& schema, const Arguments& args);
DeckSchema lyapunov_schema();
int run_lyapunov(const Comm& comm, const DeckSchema& schema, const Arguments& args);
DeckSchema converge_schema();
int run_converge(const Comm& comm, const DeckSchema& schema, const Arguments& args);
DeckSchema meanfield_schema();
int run_meanfield(const Comm& comm, const DeckSchema& schema, const Arguments& args);
DeckSchema synchronize_schema();
int run_synchronize(const Comm& comm, const DeckSchema& schema, const Arguments& args);
DeckSchema bench_schema();
int run_bench(const Comm& comm, const DeckSchema& schema, const Arguments& args);

}  // namespace tokdyn
