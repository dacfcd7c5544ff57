// The small Slurm text formats: hostlists, GRES strings, index lists, the shared job comment
// and the directives in it. Every kind of bad input has its test.
#include "hosts/slurm/slurm_text.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpupool::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ExpandHostlistTest, RangesListsAndPadding) {
  EXPECT_THAT(*ExpandHostlist("n[1-3,5]"), ElementsAre("n1", "n2", "n3", "n5"));
  EXPECT_THAT(*ExpandHostlist("gpu[09-11]x,login"),
              ElementsAre("gpu09x", "gpu10x", "gpu11x", "login"));
  EXPECT_THAT(*ExpandHostlist("r[1-2]n[1-2]"), ElementsAre("r1n1", "r1n2", "r2n1", "r2n2"));
  EXPECT_THAT(*ExpandHostlist("n3,n4"), ElementsAre("n3", "n4"));
  EXPECT_THAT(*ExpandHostlist(""), IsEmpty());
}

TEST(ExpandHostlistTest, RefusesMalformed) {
  EXPECT_THAT(ExpandHostlist("n[1-3").status().message(), HasSubstr("unbalanced '['"));
  EXPECT_THAT(ExpandHostlist("n1]").status().message(), HasSubstr("unbalanced ']'"));
  EXPECT_THAT(ExpandHostlist("n[3-1]").status().message(), HasSubstr("bad range \"3-1\""));
  EXPECT_THAT(ExpandHostlist("n[a-b]").status().message(), HasSubstr("bad range \"a-b\""));
  EXPECT_THAT(ExpandHostlist("n[1-999999]").status().message(), HasSubstr("bad range"));
}

TEST(ParseIndexListTest, RangesAndNone) {
  EXPECT_THAT(*ParseIndexList("0-2,5"), ElementsAre(0, 1, 2, 5));
  EXPECT_THAT(*ParseIndexList("N/A"), IsEmpty());
  EXPECT_THAT(ParseIndexList("0-1024").status().message(), HasSubstr("bad GPU index range"));
  EXPECT_THAT(ParseIndexList("2-x").status().message(), HasSubstr("bad GPU index range"));
}

TEST(ParseGresListTest, EverySpelling) {
  std::vector<Gres> node = *ParseGresList("gpu:h100:8(S:0-1),nic:2");
  ASSERT_EQ(node.size(), 2u);
  EXPECT_EQ(node[0].name, "gpu");
  EXPECT_EQ(node[0].type, "h100");
  EXPECT_EQ(node[0].count, 8);
  EXPECT_FALSE(node[0].has_indices);
  EXPECT_EQ(node[1].name, "nic");
  EXPECT_EQ(node[1].count, 2);

  std::vector<Gres> used = *ParseGresList("gpu:h100:3(IDX:0-1,5)");
  ASSERT_EQ(used.size(), 1u);
  EXPECT_TRUE(used[0].has_indices);
  EXPECT_THAT(used[0].indices, ElementsAre(0, 1, 5));

  std::vector<Gres> none = *ParseGresList("gpu:h100:0(IDX:N/A)");
  EXPECT_TRUE(none[0].has_indices);
  EXPECT_THAT(none[0].indices, IsEmpty());

  std::vector<Gres> request = *ParseGresList("gres:gpu:4");
  EXPECT_EQ(request[0].name, "gpu");
  EXPECT_EQ(request[0].type, "");
  EXPECT_EQ(request[0].count, 4);
  EXPECT_EQ(ParseGresList("gres/gpu:a100:2")->at(0).type, "a100");
  EXPECT_EQ(ParseGresList("gres:gpu")->at(0).count, 1);
  EXPECT_THAT(*ParseGresList(""), IsEmpty());
}

TEST(ParseGresListTest, RefusesMalformed) {
  EXPECT_THAT(ParseGresList("gpu:h100:8(IDX:0-1").status().message(),
              HasSubstr("GRES \"gpu:h100:8(IDX:0-1\": unbalanced '('"));
  EXPECT_THAT(ParseGresList(":8").status().message(), HasSubstr("no GRES name"));
  EXPECT_THAT(ParseGresList("gpu:a:b:8").status().message(),
              HasSubstr("expected name[:type][:count]"));
  EXPECT_THAT(ParseGresList("gpu:h100:9999999999999").status().message(),
              HasSubstr("count too large"));
  EXPECT_THAT(ParseGresList("gpu:h100:2(IDX:3-1)").status().message(),
              HasSubstr("bad GPU index range"));
}

TEST(CommentTest, SplitsAndJoinsAroundTheMarker) {
  CommentParts parts = SplitComment("resnet checkpoint=USR1@30 gpupool: waiting: fragmentation");
  EXPECT_EQ(parts.user, "resnet checkpoint=USR1@30");
  EXPECT_EQ(parts.adapter, "waiting: fragmentation");
  EXPECT_EQ(SplitComment("just text").user, "just text");
  EXPECT_EQ(SplitComment("gpupool: started on n1").user, "");
  EXPECT_EQ(JoinComment("resnet", "started on n1"), "resnet gpupool: started on n1");
  EXPECT_EQ(JoinComment("", "started on n1"), "gpupool: started on n1");
  EXPECT_EQ(JoinComment("", std::string(600, 'x')).size(), kMaxCommentBytes);
}

TEST(DirectivesTest, CheckpointSignalAndInterval) {
  Directives d = *ParseDirectives("resnet checkpoint=USR1@30 checkpoint_interval=600 lr=3");
  EXPECT_EQ(d.checkpoint_signal, "USR1");
  EXPECT_EQ(d.checkpoint_wait_s, 30);
  EXPECT_EQ(d.checkpoint_interval_s, 600);
  Directives none = *ParseDirectives("nothing here");
  EXPECT_EQ(none.checkpoint_signal, "");
  EXPECT_EQ(none.checkpoint_interval_s, 0);
}

TEST(DirectivesTest, RefusesMalformed) {
  EXPECT_THAT(ParseDirectives("checkpoint=USR1").status().message(),
              HasSubstr("checkpoint=USR1: expected checkpoint=SIGNAL@SECONDS"));
  EXPECT_THAT(ParseDirectives("checkpoint=usr1@30").status().message(),
              HasSubstr("signal in capitals"));
  EXPECT_THAT(ParseDirectives("checkpoint=USR1@9999").status().message(), HasSubstr("0 to 3600 s"));
  EXPECT_THAT(ParseDirectives("checkpoint_interval=0").status().message(),
              HasSubstr("expected a positive number of seconds"));
  EXPECT_THAT(ParseDirectives("checkpoint_interval=soon").status().message(),
              HasSubstr("checkpoint_interval=soon"));
}

}  // namespace
}  // namespace gpupool::slurm
