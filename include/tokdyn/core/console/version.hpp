// Version and git revision of this build (generated at build time by cmake/revision.cmake).
#pragma once

namespace tokdyn {
const char* version_string();
const char* git_revision();
}  // namespace tokdyn
