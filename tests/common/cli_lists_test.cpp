#include "common/cli_lists.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace fl::common;

TEST_CASE("command-line lists", "[common]") {
  CHECK(*parse_positive_int_list("64,128") == std::vector<int>{64, 128});
  CHECK_FALSE(parse_positive_int_list("64,,128"));
  CHECK_FALSE(parse_positive_int_list("-1"));
  CHECK_FALSE(parse_positive_int_list("0"));
  CHECK_FALSE(parse_positive_int_list(""));
  CHECK(*parse_word_list("fp16,bf16") == std::vector<std::string>{"fp16", "bf16"});
  CHECK_FALSE(parse_word_list("fp16,"));
}
