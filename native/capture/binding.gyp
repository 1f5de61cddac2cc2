{
  "targets": [
    {
      "target_name": "jportal_capture",
      "sources": ["src/addon.cc", "src/perf_ring.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-O2"]
    }
  ]
}
