// The [run] keys of every command that writes a run file: one declaration, the same defaults everywhere.
#pragma once

#include <string>

namespace tokdyn {

class DeckSchema;
class Deck;

// output (default_output), seed, checkpoint, checkpoint_every, checkpoint_interval, stop_at,
// progress_interval, blas_threads, max_memory. All but output's name and seed are run-control keys: a
// restart may change them.
void add_run_keys(DeckSchema& schema, const std::string& default_output);
// run.tile: rows per BLAS tile of the all-pairs passes (commands that have them).
void add_tile_key(DeckSchema& schema);

// run.max_memory in bytes (0: what the machine gives each rank); InputError naming the key when malformed.
double max_memory_from_deck(const Deck& deck);

}  // namespace tokdyn
