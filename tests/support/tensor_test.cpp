// Tensor storage (alignment, shapes, copies), the per-type table and the i4 nibble layout.
#include "support/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "support/diagnostics.h"

namespace presk {
namespace {

TEST(ElementTypes, TableIsIndexedByTypeAndNamesRoundTrip) {
  for (size_t i = 0; i < kElementTypeCount; ++i) {
    ElementType type = static_cast<ElementType>(i);
    EXPECT_EQ(facts(type).type, type);
    EXPECT_EQ(element_type_from_name(type_name(type)), type);
  }
  EXPECT_FALSE(element_type_from_name("f16"));
  EXPECT_EQ(facts(ElementType::i4).bits, 4u);
  EXPECT_EQ(facts(ElementType::bf16).bits, 16u);
  EXPECT_TRUE(facts(ElementType::bf16).is_float);
  EXPECT_FALSE(facts(ElementType::u8).is_signed);
  EXPECT_EQ(storage_bytes(ElementType::i4, 5), 3u);
  EXPECT_EQ(storage_bytes(ElementType::f64, 5), 40u);
  EXPECT_FALSE(checked_storage_bytes(ElementType::f64, uint64_t(1) << 62));
}

TEST(Tensor, StorageIsAlignedAndZeroed) {
  for (ElementType type : {ElementType::f64, ElementType::i4, ElementType::boolean}) {
    Tensor tensor(type, {3, 7});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data()) % Tensor::kAlignment, 0u);
    EXPECT_EQ(tensor.element_count(), 21u);
    for (uint64_t i = 0; i < tensor.element_count(); ++i) EXPECT_EQ(tensor.get(i), 0.0);
  }
  Tensor empty(ElementType::f32, {0, 4});
  EXPECT_EQ(empty.element_count(), 0u);
  EXPECT_EQ(empty.byte_size(), 0u);
  EXPECT_NE(empty.data(), nullptr);
  Tensor scalar(ElementType::f32, {});
  EXPECT_EQ(scalar.element_count(), 1u);
}

TEST(Tensor, SetRoundsIntoTheTypeAndCopiesAreDeep) {
  Tensor tensor(ElementType::bf16, {2}, {"row"});
  tensor.set(0, 1.0 + 0x1p-8 + 0x1p-30);
  EXPECT_EQ(tensor.get(0), 1.0 + 0x1p-7);
  Tensor copy = tensor;
  copy.set(0, 2.0);
  EXPECT_EQ(tensor.get(0), 1.0 + 0x1p-7);
  EXPECT_EQ(copy.get(0), 2.0);
  EXPECT_EQ(copy.axis_names(), std::vector<std::string>{"row"});
  Tensor f32(ElementType::f32, {1});
  f32.set(0, 0.1);
  EXPECT_EQ(f32.data_as<float>()[0], 0.1f);
  EXPECT_THROW(f32.data_as<double>(), InternalError);
  EXPECT_THROW(f32.get(1), InternalError);
}

TEST(Tensor, I4IsTwoPerByteLowNibbleFirst) {
  Tensor tensor(ElementType::i4, {5});
  const int64_t values[] = {-8, -1, 0, 7, 3};
  for (int i = 0; i < 5; ++i) tensor.set_integer(i, values[i]);
  ASSERT_EQ(tensor.byte_size(), 3u);
  const auto* bytes = reinterpret_cast<const uint8_t*>(tensor.data());
  EXPECT_EQ(bytes[0], 0xf8);  // element 0 (-8 = 0x8) low, element 1 (-1 = 0xf) high
  EXPECT_EQ(bytes[1], 0x70);
  EXPECT_EQ(bytes[2], 0x03);  // odd count: high nibble of the last byte stays zero
  for (int i = 0; i < 5; ++i) EXPECT_EQ(tensor.get_integer(i), values[i]);
  tensor.set_integer(2, 100);  // saturates
  EXPECT_EQ(tensor.get_integer(2), 7);
  EXPECT_EQ(tensor.get_integer(3), 7);  // neighbours untouched
  EXPECT_EQ(tensor.get_integer(1), -1);
}

TEST(Tensor, IntegerSetsSaturate) {
  Tensor u8(ElementType::u8, {2});
  u8.set(0, -5);
  u8.set_integer(1, 1000);
  EXPECT_EQ(u8.get(0), 0.0);
  EXPECT_EQ(u8.get(1), 255.0);
  Tensor i64(ElementType::i64, {1});
  i64.set_integer(0, INT64_MAX);
  EXPECT_EQ(i64.get_integer(0), INT64_MAX);
  Tensor boolean(ElementType::boolean, {1});
  boolean.set(0, 3.0);
  EXPECT_EQ(boolean.get_integer(0), 1);
}

}  // namespace
}  // namespace presk
