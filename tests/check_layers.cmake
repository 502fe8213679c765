# The layers are enforced by the build (CMakeLists.txt, culua_layer): builds three targets that
# are not part of `all` and checks each outcome.
#   cmake -DBUILD_DIR=<build folder> -P check_layers.cmake
# layers.wrong_include: a core source including a backend header must not compile (the header is
#   not on the core's include path);
# layers.wrong_call: core objects calling a backends function must not link (--no-undefined);
# layers.right_call: the same link with a call into the core itself must succeed (the control).
function(build target expect_ok pattern)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${target}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(text "${out}${err}")
  if(expect_ok)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${target} should build, but failed:\n${text}")
    endif()
  else()
    if(rc EQUAL 0)
      message(FATAL_ERROR "${target} should fail to build, but it built")
    endif()
    if(NOT text MATCHES "${pattern}")
      message(FATAL_ERROR "${target} failed, but not for the expected reason (${pattern}):\n${text}")
    endif()
  endif()
  message(STATUS "${target}: as expected")
endfunction()

build(culua_layer_right_call TRUE "")
build(culua_layer_wrong_include FALSE "host/host_backend\\.hpp: No such file")
build(culua_layer_wrong_call FALSE "undefined reference to `culua::detail::backends::have_cuda\\(\\)'")
